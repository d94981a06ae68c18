// Drives the dashboard in headless Chromium (Debian's /usr/bin/chromium) against a running
// `diskscope serve`. Usage: node dashboard.mjs BASE_URL OPERATOR_TOKEN VIEWER_TOKEN SHOT_DIR
// Exits non-zero with a message, and saves a screenshot, when a check fails.
import { chromium } from 'playwright-core';

const [base, op, viewer, shots] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
let page;
let step = 'start';
const errors = [];
function check(cond, msg) { if (!cond) throw new Error(msg); }
async function samples() {
  const t = await page.locator('#sample-count').textContent({ timeout: 15000 });
  return parseInt(t, 10);
}
try {
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on('pageerror', (e) => errors.push(e.message));

  step = 'operator logs in with ?token=';
  await page.goto(`${base}/?token=${op}`);
  await page.locator('.role', { hasText: 'operator' }).waitFor({ timeout: 15000 });

  step = 'the targets list shows the scratch file';
  await page.locator('#targets tr', { hasText: 'scratch.bin' }).waitFor({ timeout: 15000 });

  step = 'operator starts the quick preset on the scratch target';
  await page.click('#start-quick');
  await page.locator('.state', { hasText: 'running' }).waitFor({ timeout: 15000 });

  step = 'the live chart receives samples';
  await page.waitForFunction(() => parseInt(document.querySelector('#sample-count')?.textContent || '0', 10) >= 2, null, { timeout: 15000 });
  const first = await samples();
  await page.waitForTimeout(2500);
  const later = await samples();
  check(later > first, `sample count did not grow (${first} -> ${later})`);
  await page.screenshot({ path: `${shots}/live.png` });

  step = 'the remembered token survives a reload';
  await page.goto(`${base}/`);
  await page.locator('.role', { hasText: 'operator' }).waitFor({ timeout: 15000 });

  step = 'the kiosk with the viewer token follows the active run, without controls';
  const kiosk = await browser.newPage({ viewport: { width: 1920, height: 1080 } });
  kiosk.on('pageerror', (e) => errors.push(e.message));
  await kiosk.goto(`${base}/kiosk?token=${viewer}`);
  await kiosk.locator('.role', { hasText: 'viewer' }).waitFor({ timeout: 15000 });
  await kiosk.locator('#sample-count').waitFor({ timeout: 15000 });
  check(await kiosk.locator('#start-quick').count() === 0, 'the kiosk shows a start button');
  check(await kiosk.locator('#stop').count() === 0, 'the kiosk shows a stop button');
  await kiosk.screenshot({ path: `${shots}/kiosk.png` });

  step = 'a viewer on the dashboard sees no start/stop controls';
  const v = await browser.newPage();
  await v.goto(`${base}/?token=${viewer}`);
  await v.locator('.role', { hasText: 'viewer' }).waitFor({ timeout: 15000 });
  check(await v.locator('#start-quick').count() === 0, 'a viewer sees the start button');

  step = 'the operator stops the run';
  await page.click('#stop');
  await page.locator('.state', { hasText: 'stopped' }).waitFor({ timeout: 15000 });
  await kiosk.locator('.state', { hasText: 'stopped' }).waitFor({ timeout: 15000 });

  step = 'the stopped run is in the history';
  await page.locator('#history tr', { hasText: 'stopped' }).first().waitFor({ timeout: 15000 });

  step = 'a run exports as the JSON document';
  const [download] = await Promise.all([
    page.waitForEvent('download', { timeout: 15000 }),
    page.locator('#history .export-json').first().click(),
  ]);
  const path = await download.path();
  const doc = JSON.parse((await import('node:fs')).readFileSync(path, 'utf8'));
  check(doc.status === 'stopped' && Array.isArray(doc.samples) && doc.samples.length > 0,
        `export has status ${doc.status} and ${doc.samples?.length} samples`);

  step = 'a second run, then the two compared with ratios';
  await page.click('#start-quick');
  await page.locator('.state', { hasText: 'running' }).waitFor({ timeout: 15000 });
  await page.waitForTimeout(2500);
  await page.click('#stop');
  await page.locator('.state', { hasText: 'stopped' }).waitFor({ timeout: 15000 });
  await page.waitForFunction(() => document.querySelectorAll('#history input.pick').length >= 2, null, { timeout: 15000 });
  const picks = page.locator('#history input.pick');
  await picks.nth(1).check();
  await picks.nth(0).check();
  await page.locator('#ratios td.ratio').first().waitFor({ timeout: 15000 });
  const ratio = await page.locator('#ratios td.ratio').first().textContent();
  check(/^\d+\.\d\d×$/.test(ratio), `ratio cell reads "${ratio}"`);
  await page.screenshot({ path: `${shots}/compare.png`, fullPage: true });

  step = 'a wrong token gets a clear message';
  const w = await browser.newPage();
  await w.goto(`${base}/`);
  await w.fill('#token', 'not-a-token');
  await w.click('button[type=submit]');
  await w.locator('.banner.error', { hasText: 'refused' }).waitFor({ timeout: 15000 });

  check(errors.length === 0, `page errors: ${errors.join('; ')}`);
  console.log('dashboard e2e: all steps passed');
} catch (e) {
  if (page) await page.screenshot({ path: `${shots}/failure.png` }).catch(() => {});
  console.error(`dashboard e2e failed at "${step}": ${e.message} (screenshot: ${shots}/failure.png)`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
