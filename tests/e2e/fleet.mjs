// The fleet view and the kiosk wall with three real agents. Usage:
// node fleet.mjs SHOT_DIR OPERATOR_TOKEN VIEWER_TOKEN HUB_URL OTHER_URL OTHER_URL [CLOSED_URL]
// HUB_URL serves the page; the others were started with --cors-origin HUB_URL (CLOSED_URL
// without it). Exits non-zero with a message, and screenshots, when a check fails.
import { launch, check, fail } from './harness.mjs';

const [shots, op, viewer, hub, b, c, closed] = process.argv.slice(2);
const browser = await launch();
const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
const pages = {};
const errors = [];
let step = 'start';
const T = { timeout: 20000 };
async function open(name, url, viewport) {
  const p = await context.newPage();
  if (viewport) await p.setViewportSize(viewport);
  p.on('pageerror', (e) => errors.push(`${name}: ${e.message}`));
  pages[name] = p;
  await p.goto(url);
  return p;
}
const card = (p, url) => p.locator(`.agent-card[data-url="${url}"]`);

try {
  step = 'the hub shows itself on the fleet page';
  const page = await open('fleet', `${hub}/?token=${op}`);
  await page.locator('.role', { hasText: 'operator' }).waitFor(T);
  await page.click('#tab-fleet');
  await card(page, hub).locator('.agent-state.online').waitFor(T);

  step = 'a wrong token is refused by name and not kept';
  await page.fill('#agent-url', b);
  await page.fill('#agent-token', 'not-the-token-0123456789');
  await page.click('#add-agent');
  await page.locator('#add-agent-error', { hasText: 'refused the token' }).waitFor(T);
  check(await card(page, b).count() === 0, 'an agent with a wrong token was added');

  if (closed) {
    step = 'an agent without --cors-origin for this page says how to let it in';
    await page.fill('#agent-url', closed);
    await page.fill('#agent-token', op);
    await page.click('#add-agent');
    await page.locator('#add-agent-error', { hasText: `--cors-origin ${hub}` }).waitFor(T);
  }

  step = 'two more agents are added (address without scheme, and with)';
  await page.fill('#agent-url', b.replace('http://', ''));
  await page.fill('#agent-token', op);
  await page.click('#add-agent');
  await card(page, b).locator('.agent-state.online').waitFor(T);
  await page.fill('#agent-url', c);
  await page.fill('#agent-token', op);
  await page.click('#add-agent');
  await card(page, c).locator('.agent-state.online').waitFor(T);
  for (const url of [hub, b, c]) {
    await card(page, url).locator('.agent-targets tr', { hasText: 'scratch.bin' }).waitFor(T);
    await card(page, url).locator('.agent-run', { hasText: 'idle' }).waitFor(T);
  }
  // The emulated SSD on the third agent reports a temperature.
  const temps = await card(page, c).locator('.agent-targets td.temp').allTextContents();
  console.log(`temperatures on ${c}: ${temps.join(', ')}`);
  if (process.env.EXPECT_TEMPERATURE) {
    check(temps.some((t) => t.includes('°C')), `no drive temperature on ${c}: ${temps}`);
  }

  step = 'the fleet survives a reload (kept in the browser, not in the link)';
  await page.reload();
  await page.click('#tab-fleet');
  await card(page, c).locator('.agent-state.online').waitFor(T);
  check(!page.url().includes(op), `the token stayed in the address: ${page.url()}`);
  check(page.url().endsWith('/fleet'), `the fleet page has no address of its own: ${page.url()}`);
  await page.screenshot({ path: `${shots}/fleet.png`, fullPage: true });

  step = 'the same preset starts on all three at once';
  for (const url of [hub, b, c]) await card(page, url).locator('.select-agent').check();
  await page.selectOption('#fleet-preset', 'quick');
  await page.fill('#fleet-runtime', '20s');
  check((await page.locator('#start-many').textContent()).includes('3'), 'not three selected');
  await page.click('#start-many');
  for (const url of [hub, b, c]) {
    await card(page, url).locator('.agent-started', { hasText: 'started run' }).waitFor(T);
    await card(page, url).locator('.agent-run', { hasText: 'quick' }).waitFor(T);
  }
  await page.screenshot({ path: `${shots}/fleet-running.png`, fullPage: true });

  step = 'the kiosk wall shows the three live runs';
  const wallUrl = await page.locator('#open-wall').getAttribute('href');
  check(!wallUrl.includes(op) && !wallUrl.includes('token'), `the wall link carries a token: ${wallUrl}`);
  const wall = await open('wall', `${hub}${wallUrl}`, { width: 1920, height: 1080 });
  for (const url of [hub, b, c]) {
    const tile = wall.locator(`.tile[data-url="${url}"]`);
    await tile.locator('.tile-state', { hasText: 'running' }).waitFor(T);
    await tile.locator('.tile-big', { hasText: 'MB/s' }).waitFor(T);
    await tile.locator('.tile-what', { hasText: 'quick' }).waitFor(T);
    await tile.locator('canvas').waitFor(T);
  }
  check(await wall.locator('.tile').count() === 3, 'not three tiles');
  check(await wall.locator('#start-quick, #tab-new, #stop').count() === 0, 'the wall shows controls');
  await wall.waitForTimeout(1500);
  await wall.screenshot({ path: `${shots}/kiosk-wall.png` });

  step = 'between runs a tile shows the last result';
  const running = await (await fetch(`${hub}/api/v1/runs?status=running`, { headers: { Authorization: `Bearer ${op}` } })).json();
  await fetch(`${hub}/api/v1/runs/${running.runs[0].id}/stop`, { method: 'POST', headers: { Authorization: `Bearer ${op}` } });
  await wall.locator(`.tile[data-url="${hub}"] .tile-last`, { hasText: 'last result: write' }).waitFor(T);

  step = 'a tile for an agent this browser has no token for says so';
  const stray = await open('stray', `${hub}/kiosk?agents=${hub},http://127.0.0.1:9`, { width: 1280, height: 720 });
  await stray.locator('.tile.error', { hasText: 'No token for this agent' }).waitFor(T);

  step = 'a removed agent is gone after a reload';
  await page.bringToFront();
  await card(page, c).locator('.remove-agent').click();
  await page.reload();
  await page.click('#tab-fleet');
  await card(page, b).locator('.agent-state.online').waitFor(T);
  check(await card(page, c).count() === 0, 'the removed agent is back');

  step = 'a group starts from the fleet view and the live view reads its merged headline';
  const auth = { headers: { Authorization: `Bearer ${op}` } };
  for (const url of [hub, b, c]) {
    const going = await (await fetch(`${url}/api/v1/runs?status=running`, auth)).json();
    for (const r of going.runs) await fetch(`${url}/api/v1/runs/${r.id}/stop`, { method: 'POST', ...auth });
  }
  for (const url of [hub, b]) {
    await card(page, url).locator('.agent-run', { hasText: 'idle' }).waitFor(T);
    await card(page, url).locator('.select-agent').check();
  }
  await page.selectOption('#fleet-preset', 'rnd4k-q1-read');
  await page.fill('#fleet-runtime', '3s');
  await page.click('#start-group');
  await page.locator('#live-end', { hasText: 'group of 2' }).waitFor({ timeout: 60000 }).catch(() => {});
  const group = (await (await fetch(`${hub}/api/v1/runs?per_page=1`, auth)).json()).runs[0];
  check(group.target.startsWith('group of 2'), `the hub's newest run is not the group: ${group.target}`);
  await page.locator('#live-end', { hasText: `run ${group.id}` }).waitFor({ timeout: 60000 });
  const line = await page.locator('#live-result').textContent();
  console.log(`group run ${group.id} (${group.status}): ${line}`);
  check(group.status === 'completed', `the group ended ${group.status}`);
  const iops = Math.round(group.summary.read.iops);
  check(line.includes('IOPS') || line.includes('MB/s'), `no merged figure in the headline: ${line}`);
  await page.screenshot({ path: `${shots}/group-live.png`, fullPage: true });
  await page.click('#open-result');
  const rows = page.locator('#targets-summary tbody tr');
  await rows.first().waitFor(T);
  check(await rows.count() === 2, `a row per host: ${await rows.count()}`);
  for (const url of [hub, b]) {
    check((await page.locator('#targets-summary').textContent()).includes(url), `no row for ${url}`);
  }
  console.log(`group: ${iops} IOPS merged over ${hub} and ${b}`);
  await page.screenshot({ path: `${shots}/group-result.png`, fullPage: true });

  check(errors.length === 0, `page errors: ${errors.join('; ')}`);
  console.log('fleet e2e: all steps passed');
} catch (e) {
  await fail('fleet e2e', step, e, pages, shots);
} finally {
  await browser.close();
}
