// Starts the dashboard (a file, not an inline script, so the page's CSP can forbid inline code).
import init from '/pkg/frontend.js';

// A bug must not leave a blank page. The bundle aborts on a panic (no Rust panic hook runs:
// it is built with -Cpanic=immediate-abort), which reaches the page as a
// WebAssembly.RuntimeError, thrown from an event handler or rejected from a task: say what
// happened and how to recover, once.
function fatal(e) {
  if (!(e instanceof WebAssembly.RuntimeError) || document.querySelector('.banner.fatal')) return;
  const p = document.createElement('p');
  p.className = 'banner error fatal';
  p.setAttribute('role', 'alert');
  p.textContent = `The dashboard hit a bug and stopped (${e.message}). Reload the page to continue; measured runs are safe in the agent's history.`;
  document.body.prepend(p);
}
window.addEventListener('error', (ev) => fatal(ev.error));
window.addEventListener('unhandledrejection', (ev) => fatal(ev.reason));

init().then(() => document.getElementById('placeholder')?.remove())
      .catch((e) => {
        console.error('diskscope dashboard failed to start', e);
        const p = document.getElementById('placeholder');
        if (p) p.textContent = 'The dashboard could not start: ' + e;
      });
