// Starts the dashboard (a file, not an inline script, so the page's CSP can forbid inline code).
import init from '/pkg/frontend.js';
init().then(() => document.getElementById('placeholder')?.remove())
      .catch((e) => {
        console.error('diskscope dashboard failed to start', e);
        const p = document.getElementById('placeholder');
        if (p) p.textContent = 'The dashboard could not start: ' + e;
      });
