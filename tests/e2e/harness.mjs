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

/// Saves `failure-NAME.png` of each page in `pages` and says where `script` failed.
export async function fail(script, step, error, pages, shots) {
  for (const [name, p] of Object.entries(pages)) {
    await p.screenshot({ path: `${shots}/failure-${name}.png`, fullPage: true }).catch(() => {});
  }
  console.error(`${script} failed at "${step}": ${error.message} (screenshots: ${shots}/failure-*.png)`);
  process.exitCode = 1;
}
