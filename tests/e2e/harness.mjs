// What every browser test script shares: Debian's Chromium launched headless with the flags
// this closed network needs, a check that throws with its message, and the failure report
// (a screenshot of every open page, the step that failed, a non-zero exit code).
import { chromium } from 'playwright-core';

export function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export function check(cond, msg) {
  if (!cond) throw new Error(msg);
}

/// Saves `failure-NAME.png` of each page in `pages` and says where `script` failed, with
/// what each page showed at the top (its banner and status line) and, when given, what
/// `context()` says (the agent's view): a CI log keeps the text, not the screenshots.
export async function fail(script, step, error, pages, shots, context) {
  const shown = [];
  for (const [name, p] of Object.entries(pages)) {
    await p.screenshot({ path: `${shots}/failure-${name}.png`, fullPage: true }).catch(() => {});
    const text = await p.evaluate(() => document.body?.innerText || '').catch((e) => `(${e.message})`);
    shown.push(`  ${name} showed: ${JSON.stringify(text.replace(/\s+/g, ' ').slice(0, 500))}`);
  }
  const extra = context ? await context().catch((e) => `(${e.message})`) : '';
  console.error(`${script} failed at "${step}": ${error.message} (screenshots: ${shots}/failure-*.png)\n`
    + `${shown.join('\n')}${extra ? `\n  ${extra}` : ''}`);
  process.exitCode = 1;
}

/// The agent's run API for a script: `api(path, init)` with the operator's token,
/// `start(body)` (the run's id; fails unless 201), `info(id)`, `waitEnd(id)` (the stored run
/// once it ends; fails unless completed), `runToEnd(body)` (its id), and `runAtOnce(list)`:
/// each `[name, body]` started at once, then waited for (ids by name). Presets that spend
/// their time on a fixed run time or a replay's recorded idle finish together.
export function runs(base, op) {
  const api = (path, init = {}) => fetch(`${base}${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${op}`, 'content-type': 'application/json', ...(init.headers || {}) },
  });
  const info = async (id) => (await api(`/api/v1/runs/${id}`)).json();
  async function start(body) {
    const r = await api('/api/v1/runs', { method: 'POST', body: JSON.stringify(body) });
    const text = await r.text();
    check(r.status === 201, `${body.preset || body.name} did not start: ${r.status} ${text}`);
    return JSON.parse(text).id;
  }
  async function waitEnd(id) {
    for (let i = 0; i < 1500; i++) {
      const run = await info(id);
      if (run.status !== 'running') {
        check(run.status === 'completed', `run ${id} (${run.name}) ended ${run.status}: ${JSON.stringify(run.error)}`);
        return run;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`run ${id} did not end`);
  }
  const runToEnd = async (body) => (await waitEnd(await start(body))).id;
  async function runAtOnce(list) {
    const started = [];
    for (const [name, body] of list) started.push([name, await start(body)]);
    const ids = {};
    for (const [name, id] of started) ids[name] = (await waitEnd(id)).id;
    return ids;
  }
  return { api, info, start, waitEnd, runToEnd, runAtOnce };
}
