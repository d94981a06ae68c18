// Every view and every preset's result at 1920x1080 and 390x844 (and the kiosk at 4K), in
// headless Chromium against a fresh `diskscope serve`. Usage:
// node views.mjs BASE_URL OPERATOR_TOKEN VIEWER_TOKEN SHOT_DIR WORK_DIR
// Checks: empty states before any run, each preset's headline first (before charts and
// steps; no whole-run aggregate for presets), no horizontal scrolling, every view's own
// address opening it again after a reload, the kiosk's labels and large figure, between
// runs the last result's headline, the dark theme, copy as image. Prints each preset's
// headline line and the screenshots it saved.
import { launch, check, fail, runs as runApi } from './harness.mjs';

const [base, op, viewer, shots, work] = process.argv.slice(2);
const browser = await launch();
const T = { timeout: 20000 };
const pages = {};
const errors = [];
const saved = [];
let step = 'start';
async function context(name, viewport, extra = {}) {
  const ctx = await browser.newContext({ viewport, acceptDownloads: true, ...extra });
  const p = await ctx.newPage();
  p.on('pageerror', (e) => errors.push(`${name}: ${e.message}`));
  pages[name] = p;
  return p;
}
async function shot(p, name) {
  const path = `${shots}/${name}.png`;
  await p.screenshot({ path, fullPage: true });
  saved.push(path);
}
async function noHorizontalScroll(p, what) {
  const [sw, iw] = await p.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  check(sw <= iw + 1, `${what}: the page scrolls sideways (${sw} px content in ${iw} px)`);
}
const { api, runToEnd, runAtOnce } = runApi(base, op);

// Each preset with options small enough for a test, and what its headline shows.
const PRESETS = [
  ['cdm', { count: 1, runtime_ms: '400ms', idle_ms: '100ms', size: '64M' }, '#cdm-tiles'],
  ['cdm-peak', { count: 1, runtime_ms: '400ms', idle_ms: '100ms', size: '64M' }, '#cdm-tiles'],
  ['atto', { size: '64M', runtime_ms: '200ms' }, '#atto-bars'],
  ['full-span', { interval_ms: '100ms', size: '256M' }, '.full-span canvas'],
  ['sustain', { rate: '100MB', runtime_ms: '2s', size: '256M' }, '.sustain .verdict'],
  ['iometer-mix', { runtime_ms: '3s', size: '64M' }, '.first-last'],
  ['snia-steady', { size: '32M', runtime_ms: '300ms', count: 6 }, '.steady .rounds li'],
  ['cache-recovery', { size: '64M', idle_ms: '1s' }, '.recovery'],
  ['compress-probe', { size: '64M', runtime_ms: '1s', idle_ms: '100ms' }, '.compress .rounds li'],
];

try {
  const targets = await (await api('/api/v1/targets')).json();
  const scratch = targets.find((t) => t.scratch).path;

  step = 'before any run: empty states say what to do';
  const fresh = await context('fresh', { width: 1400, height: 1000 });
  await fresh.goto(`${base}/?token=${op}`);
  await fresh.locator('.role', { hasText: 'operator' }).waitFor(T);
  check(!fresh.url().includes(op), `the token stayed in the address bar: ${fresh.url()}`);
  await fresh.locator('.status.empty', { hasText: 'Quick test' }).waitFor(T);
  check(await fresh.locator('canvas').count() === 0, 'empty axes before any run');
  await fresh.click('#tab-targets');
  await fresh.locator('#targets tr', { hasText: 'created on first use (1 GiB)' }).waitFor(T);
  check(fresh.url().endsWith('/targets'), `the targets view has no address: ${fresh.url()}`);
  await shot(fresh, 'empty-live');
  await fresh.click('#tab-history');
  await fresh.locator('.history .status.empty').waitFor(T);

  step = 'a single workload and every preset run';
  const ids = {};
  ids.single = await runToEnd({ target: scratch, name: 'single randread',
    spec: { rw: 'randread', bs: '4k', iodepth: 8, size: '64M', runtime_ms: '1s' } });
  // The presets at once, each on its own file in WORK_DIR (one after another on the
  // scratch file they took most of the test's time); the last one after them, so that it
  // is the kiosk's last result.
  step = 'the presets run';
  Object.assign(ids, await runAtOnce(PRESETS.slice(0, -1).map(([preset, options]) =>
    [preset, { target: `${work}/${preset}.bin`, preset, options }])));
  const [lastPreset, lastOptions] = PRESETS[PRESETS.length - 1];
  ids[lastPreset] = await runToEnd({ target: scratch, preset: lastPreset, options: lastOptions });

  for (const [vw, vh] of [[1920, 1080], [390, 844]]) {
    const tag = `${vw}x${vh}`;
    const p = await context(`dashboard-${tag}`, { width: vw, height: vh });
    await p.goto(`${base}/?token=${op}`);
    await p.locator('.role', { hasText: 'operator' }).waitFor(T);

    // Each view by its own address, again after a reload.
    const VIEWS = [
      ['live', '/', 'section.live'],
      ['new', '/new', 'section.new-test'],
      ['history', '/history', '#history'],
      ['targets', '/targets', '#targets'],
      ['fleet', '/fleet', 'section.fleet'],
      ['compare', `/compare?runs=${ids.single},${ids.cdm}`, '#compare #compare-note'],
    ];
    for (const [name, path, sel] of VIEWS) {
      step = `${tag}: ${path} opens its view, also after a reload`;
      await p.goto(`${base}${path}`);
      await p.locator(sel).first().waitFor(T);
      await p.reload();
      await p.locator(sel).first().waitFor(T);
      check(p.url().endsWith(path), `${path} became ${p.url()}`);
      await noHorizontalScroll(p, `${tag} ${path}`);
      await shot(p, `${name}-${tag}`);
    }
    step = `${tag}: the history rows read as results`;
    await p.goto(`${base}/history`);
    const cdmRow = p.locator(`#history tr[data-run="${ids.cdm}"] td.result`);
    const cdmLine = await cdmRow.textContent(T);
    check(cdmLine.includes('SEQ1M Q8T1 R') && cdmLine.includes('RND4K Q1T1'), `cdm history row: ${cdmLine}`);

    step = `${tag}: the single workload shows its figures and the aggregate`;
    await p.goto(`${base}/runs/${ids.single}`);
    await p.locator('.headline.single').waitFor(T);
    await p.locator('#summary').waitFor(T);
    await noHorizontalScroll(p, `${tag} single`);
    await shot(p, `result-single-${tag}`);

    for (const [preset, , sel] of PRESETS) {
      step = `${tag}: ${preset}'s result opens with its headline`;
      await p.goto(`${base}/runs/${ids[preset]}`);
      await p.locator(sel).first().waitFor(T);
      await p.locator('.charts canvas').first().waitFor(T);
      const order = await p.evaluate(() => {
        const h = document.querySelector('#headline');
        const later = [...document.querySelectorAll('.charts, #steps, #analysis')];
        return h && later.every((e) => h.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_FOLLOWING);
      });
      check(order, `${preset}: the headline is not before the charts and steps`);
      const info = await (await api(`/api/v1/runs/${ids[preset]}`)).json();
      if (info.steps.length > 1) {
        check(await p.locator('#summary').count() === 0, `${preset}: the whole-run aggregate of ${info.steps.length} steps is shown`);
      }
      await noHorizontalScroll(p, `${tag} ${preset}`);
      await p.reload();
      await p.locator(sel).first().waitFor(T);
      await p.locator('#headline').screenshot({ path: `${shots}/headline-${preset}-${tag}.png` });
      saved.push(`${shots}/headline-${preset}-${tag}.png`);
      await shot(p, `result-${preset}-${tag}`);
      if (vw === 1920) {
        await p.goto(`${base}/history`);
        const row = await p.locator(`#history tr[data-run="${ids[preset]}"] td.result`).textContent(T);
        console.log(`headline ${preset} (run ${info.id}, ${info.steps.length} steps): ${row}`);
      }
    }
    step = `${tag}: atto reads 512 B first`;
    await p.goto(`${base}/runs/${ids.atto}`);
    await p.locator('#atto-bars li').first().waitFor(T);
    const firstSize = await p.locator('#atto-bars li .size').first().textContent(T);
    check(firstSize.trim() === '512 B', `atto's first row is ${firstSize}`);
    check(await p.locator('#cdm-grid').count() === 0, 'atto shows a CrystalDiskMark grid');
    step = `${tag}: cdm has its 2x4 tiles`;
    await p.goto(`${base}/runs/${ids.cdm}`);
    await p.locator('#cdm-tiles .cdm-tile').nth(7).waitFor(T);
    check(await p.locator('#cdm-tiles .tile-row:not(.head)').count() === 4, 'cdm: not 4 rows of tiles');
    check(await p.locator('#cdm-tiles .cdm-tile').count() === 8, 'cdm: not 8 tiles');
  }

  step = 'copy as image puts a PNG on the clipboard';
  const clip = await context('clipboard', { width: 1400, height: 1000 },
    { permissions: ['clipboard-read', 'clipboard-write'] });
  await clip.goto(`${base}/?token=${op}`);
  await clip.locator('.role', { hasText: 'operator' }).waitFor(T);
  await clip.goto(`${base}/runs/${ids.cdm}`);
  await clip.click('#copy-image');
  const status = clip.locator('#headline [role=status]');
  await clip.waitForFunction(() => (document.querySelector('#headline [role=status]')?.textContent || '').length > 0, null, T);
  const said = await status.textContent();
  if (said.includes('copied')) {
    const types = await clip.evaluate(async () => (await navigator.clipboard.read()).flatMap((i) => i.types));
    check(types.includes('image/png'), `the clipboard holds ${types}`);
    console.log('copy as image: a PNG on the clipboard');
  } else {
    check(said.includes('saved as diskscope-cdm-'), `copy as image: ${said}`);
    console.log(`copy as image: ${said}`);
  }

  step = 'the dark theme follows the system setting';
  const dark = await context('dark', { width: 1400, height: 1000 }, { colorScheme: 'dark' });
  await dark.goto(`${base}/?token=${op}`);
  await dark.locator('.role', { hasText: 'operator' }).waitFor(T);
  await dark.goto(`${base}/runs/${ids.cdm}`);
  await dark.locator('#cdm-tiles').waitFor(T);
  const bg = await dark.evaluate(() => getComputedStyle(document.body).backgroundColor);
  const rgb = bg.match(/\d+/g).map(Number);
  check(rgb[0] + rgb[1] + rgb[2] < 150, `the dark theme's background is ${bg}`);
  await shot(dark, 'result-cdm-dark');

  step = 'the kiosk: test, target, a very large figure during a run; the last headline between runs';
  const kiosks = [];
  for (const [vw, vh] of [[1920, 1080], [390, 844], [3840, 2160]]) {
    const k = await context(`kiosk-${vw}`, { width: vw, height: vh });
    await k.goto(`${base}/kiosk?token=${viewer}`);
    kiosks.push([k, `${vw}x${vh}`]);
  }
  for (const [k, tag] of kiosks) {
    await k.locator('#kiosk-last', { hasText: lastPreset }).waitFor(T);
    await shot(k, `kiosk-between-${tag}`);
  }
  const r = await api('/api/v1/runs', { method: 'POST', body: JSON.stringify({ target: scratch, preset: 'quick', options: { runtime_ms: '20s' } }) });
  const { id: live } = await r.json();
  for (const [k, tag] of kiosks) {
    await k.locator('#kiosk-test', { hasText: 'quick' }).waitFor(T);
    await k.locator('#kiosk-target', { hasText: 'scratch.bin' }).waitFor(T);
    await k.waitForFunction(() => /\d/.test(document.querySelector('#kiosk-big')?.textContent || ''), null, T);
    await k.locator('#eta', { hasText: 'ETA' }).waitFor(T);
    await k.locator('canvas#throughput').waitFor(T);
    const px = await k.evaluate(() => parseFloat(getComputedStyle(document.querySelector('#kiosk-big')).fontSize));
    check(px >= (tag.startsWith('390') ? 60 : 120), `kiosk ${tag}: the figure is ${px} px`);
    check(await k.locator('button, nav').count() === 0, `kiosk ${tag} shows controls`);
    await noHorizontalScroll(k, `kiosk ${tag}`);
    if (tag === '1920x1080') {
      const [sh, ih] = await k.evaluate(() => [document.documentElement.scrollHeight, window.innerHeight]);
      check(sh <= ih + 8, `the kiosk at 1080p does not fit the screen (${sh} px of ${ih})`);
    }
    await k.waitForTimeout(1000);
    await shot(k, `kiosk-running-${tag}`);
  }
  await api(`/api/v1/runs/${live}/stop`, { method: 'POST' });
  for (const [k, tag] of kiosks) {
    await k.locator('#kiosk-last', { hasText: 'quick' }).waitFor(T);
  }

  check(errors.length === 0, `page errors: ${errors.join('; ')}`);
  console.log(`screenshots:\n${saved.join('\n')}`);
  console.log('views e2e: all steps passed');
} catch (e) {
  await fail('views e2e', step, e, pages, shots);
} finally {
  await browser.close();
}
