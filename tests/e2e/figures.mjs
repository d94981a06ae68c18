// Every figure the dashboard shows is the stored result. Usage:
// node figures.mjs BASE_URL OPERATOR_TOKEN VIEWER_TOKEN SHOT_DIR WORK_DIR
// Runs a single workload, a read/write mix and the presets (small sizes) through the API,
// then at 1920x1080 and 390x844 reads the figures on results, history, compare, the kiosk
// and the live view's end and checks each against the API's stored report to its shown
// precision; checks that every visible table header sits over its column's cells; checks
// from the charts' own data (the canvas's data-segments) that no line joins samples across
// a step boundary or pause; checks cdm's progress at 40 % of its planned time; starts
// sustain from the New-test form and finds preset `sustain` stored.
import { launch, check, fail, runs as runApi } from './harness.mjs';

const [base, op, viewer, shots, work] = process.argv.slice(2);
const browser = await launch();
const T = { timeout: 20000 };
const pages = {};
const errors = [];
let step = 'start';
// Each part's failure is kept and the next part runs: one run lists every wrong figure.
const failures = [];
const t0 = Date.now();
const since = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`;
async function part(name, fn) {
  step = name;
  const t = Date.now();
  try {
    await fn();
    console.log(`part (${Date.now() - t} ms, at ${since()}): ${name}`);
  } catch (e) {
    failures.push(`${name}: ${e.message.split('\n')[0]}`);
    console.error(`FAILED ${name}: ${e.message.split('\n')[0]}`);
  }
}
const { api, info, start, waitEnd, runToEnd, runAtOnce } = runApi(base, op);
async function context(name, viewport) {
  const ctx = await browser.newContext({ viewport });
  const p = await ctx.newPage();
  p.on('pageerror', (e) => errors.push(`${name}: ${e.message}`));
  pages[name] = p;
  await p.goto(`${base}/?token=${op}`);
  await p.locator('.role', { hasText: 'operator' }).waitFor(T);
  return p;
}
// A figure as shown, to the precision shown.
// The first number in the text (thousands separators dropped): "307.7 ± 98.8" is 307.7.
const num = (text) => parseFloat((String(text).replace(/,/g, '').match(/-?[0-9]+(\.[0-9]+)?/) || ['NaN'])[0]);
function same(shown, stored, decimals, what) {
  const want = Number(stored).toFixed(decimals);
  const got = Number(num(shown)).toFixed(decimals);
  check(got === want, `${what}: the page shows ${shown}, the stored result is ${want}`);
}
// Each visible header's box lies over its column's cells.
async function headersOverCells(p, what) {
  const bad = await p.evaluate(() => {
    const out = [];
    for (const table of document.querySelectorAll('table')) {
      if (!table.offsetParent) continue;
      const head = table.querySelector('thead tr');
      if (!head) continue;
      const ths = [...head.children].filter((c) => c.offsetParent && getComputedStyle(c).display !== 'none');
      for (const row of table.querySelectorAll('tbody tr')) {
        const cells = [...row.children].filter((c) => getComputedStyle(c).display !== 'none');
        if (cells.length !== ths.length) {
          out.push(`${table.id || table.className}: ${ths.length} headers over ${cells.length} cells`);
          break;
        }
        ths.forEach((th, i) => {
          const a = th.getBoundingClientRect();
          const b = cells[i].getBoundingClientRect();
          const mid = b.left + b.width / 2;
          if (mid < a.left - 1 || mid > a.right + 1) out.push(`${table.id}: header '${th.textContent}' is not over its cell '${cells[i].textContent}'`);
        });
      }
    }
    return out;
  });
  check(bad.length === 0, `${what}: ${bad.slice(0, 3).join('; ')}`);
}
// No chart line joins samples of two steps or runs through a pause.
async function noJoinedSteps(p, run, what) {
  const bounds = run.steps.slice(1).map((s) => s.start_ns / 1e9);
  // The samples arrive after the page: wait for a chart to carry a line (a slow machine drew
  // the canvases of latency-target at 390 px before its samples had come).
  await p.waitForFunction(() => [...document.querySelectorAll('canvas[data-segments]')]
    .some((c) => /throughput|iops|latency/.test(c.id)
      && JSON.parse(c.getAttribute('data-segments')).some((s) => s.segments.length > 0)), null, T)
    .catch(() => {});
  const charts = await p.evaluate(() => [...document.querySelectorAll('canvas[data-segments]')]
    .map((c) => [c.id, c.getAttribute('data-segments')]));
  check(charts.length > 0, `${what}: no chart carries its data`);
  let checked = 0;
  for (const [id, json] of charts) {
    if (!/throughput|iops|latency/.test(id)) continue;
    for (const s of JSON.parse(json)) {
      for (const [x0, x1] of s.segments) {
        checked++;
        const t = bounds.find((b) => x0 < b - 1e-6 && x1 > b + 1e-6);
        check(t === undefined, `${what}: chart ${id} line '${s.name}' runs from ${x0} s to ${x1} s across the step boundary at ${t} s`);
      }
    }
  }
  check(checked > 0, `${what}: no line segments to check`);
}
// The CrystalDiskMark figures of a run's steps: the best and mean MB/s per test label.
function cdmFigures(run) {
  const out = {};
  for (const s of run.steps) {
    const kind = /rand/.test(s.spec.rw) ? 'RND' : 'SEQ';
    const bs = s.spec.bs >= 1 << 20 ? `${s.spec.bs >> 20}M` : `${s.spec.bs >> 10}K`;
    const label = `${kind}${bs} Q${s.spec.iodepth}T${s.spec.jobs}`;
    const dir = s.spec.rw.endsWith('read') ? 'read' : 'write';
    const v = s.summary[dir].mb_s;
    (out[`${label} ${dir}`] ||= []).push(v);
  }
  return out;
}

// Every preset, small (sustain is started from the form below); `quick` last, so that it
// is the kiosk's last result.
const PRESETS = [
  ['cdm-peak', { count: 1, runtime_ms: '300ms', idle_ms: '100ms', size: '64M' }],
  ['atto', { size: '16M', runtime_ms: '150ms' }],
  ['orion-matrix', { size: '64M', runtime_ms: '100ms' }],
  ['iometer-mix', { runtime_ms: '2s', size: '64M' }],
  ['snia-steady', { size: '32M', runtime_ms: '300ms', count: 6 }],
  ['fill', { size: '64M' }],
  ['compress-probe', { size: '64M', runtime_ms: '500ms', idle_ms: '200ms' }],
  ['cache-recovery', { size: '32M', idle_ms: '500ms' }],
  ['latency-target', { size: '64M', runtime_ms: '300ms' }],
  ['fill-level', { size: '96M', runtime_ms: '200ms' }],
  ['fakecap', { size: '32M' }],
  ['error-scan', { size: '32M' }],
  ['apps', { size: '64M', count: 1 }],
  ['app-build', { size: '64M', count: 1 }],
  ['app-database', { size: '64M', count: 1 }],
  ['app-files', { size: '64M', count: 1 }],
  ['seq1m-q8-read', { runtime_ms: '1s' }],
  ['seq1m-q8-write', { runtime_ms: '1s' }],
  ['rnd4k-q32-read', { runtime_ms: '1s' }],
  ['rnd4k-q32-write', { runtime_ms: '1s' }],
  ['rnd4k-q1-read', { runtime_ms: '1s' }],
  ['rnd4k-q1-write', { runtime_ms: '1s' }],
  ['load-latency', { size: '32M', runtime_ms: '200ms', count: 4 }],
  // The single tests run 1 s each: at 300 ms, two fresh-clone CIs saw seq1m-q8-write stored
  // with nothing measured beside the sized presets and three browsers (not reproduced from
  // the CLI beside four CPU hogs; an open question, see the stop's note).
  // Newest last: the history's first page (25 rows) holds these and the two workloads.
  ['cdm', { count: 2, runtime_ms: '400ms', idle_ms: '200ms', size: '64M' }],
  ['full-span', { interval_ms: '100ms', size: '256M' }],
  ['quick', { runtime_ms: '2s' }],
];

try {
  const targets = await (await api('/api/v1/targets')).json();
  const scratch = targets.find((t) => t.scratch).path;

  step = 'a single workload, a read/write mix and the presets run';
  const ids = {};
  // The presets that take a size run at once, each on its own file in WORK_DIR (most of
  // their time is a replay's recorded idle or a step's fixed run time: one after another
  // they took 80 of the test's 140 s); those that take only a run time, the two workloads
  // and the last three run one at a time on the scratch file meanwhile and after.
  const own = PRESETS.slice(0, -3).filter(([, o]) => 'size' in o);
  const onScratch = PRESETS.slice(0, -3).filter(([, o]) => !('size' in o));
  const together = runAtOnce(own.map(([preset, options]) =>
    [preset, { target: `${work}/${preset}.bin`, preset, options }]));
  together.catch(() => {}); // awaited below: a failure is reported there
  for (const [preset, options] of onScratch) {
    step = `running ${preset}`;
    ids[preset] = await runToEnd({ target: scratch, preset, options });
  }
  ids.single = await runToEnd({ target: scratch, name: 'single randread',
    spec: { rw: 'randread', bs: '4k', iodepth: 32, size: '64M', runtime_ms: '1s' } });
  ids.mix = await runToEnd({ target: scratch, name: 'mix 70/30',
    spec: { rw: 'randrw', read_pct: 70, bs: '4k', iodepth: 16, size: '64M', runtime_ms: '1s' } });
  step = 'the presets on their own files';
  Object.assign(ids, await together);
  for (const [preset, options] of PRESETS.slice(-3)) {
    step = `running ${preset}`;
    ids[preset] = await runToEnd({ target: scratch, preset, options });
  }
  console.log(`the runs ended at ${since()}`);
  const runs = {};
  for (const [k, id] of Object.entries(ids)) runs[k] = await info(id);

  for (const [vw, vh] of [[1920, 1080], [390, 844]]) {
    const tag = `${vw}x${vh}`;
    const p = await context(`dashboard-${tag}`, { width: vw, height: vh });

    const cdm = runs.cdm;
    const figs = cdmFigures(cdm);
    const seqRead = Math.max(...figs['SEQ1M Q8T1 read']);
    const single = runs.single.summary.read;
    for (const k of ['single', 'mix']) await part(`${tag}: ${k}'s summary table is the stored summary, each header over its cells`, async () => {
      const r = runs[k];
      await p.goto(`${base}/runs/${r.id}`);
      await p.locator('#summary tbody tr').first().waitFor(T);
      const head = await p.locator('#summary thead th').allTextContents();
      for (const row of await p.locator('#summary tbody tr').all()) {
        const cells = await row.locator('th, td').allTextContents();
        const d = r.summary[cells[0]];
        const col = (name) => cells[head.indexOf(name)];
        same(col('MB/s'), d.mb_s, 1, `${tag} ${k} ${cells[0]} MB/s`);
        same(col('IOPS'), d.iops, 0, `${tag} ${k} ${cells[0]} IOPS`);
      }
      await headersOverCells(p, `${tag} ${k} result`);
      const top = await p.locator('#headline').evaluate((e) => e.getBoundingClientRect().top + window.scrollY);
      check(top < vh, `${tag} ${k}: the result starts below the first screen (${top} px)`);
      await noJoinedSteps(p, r, `${tag} ${k}`);
    });

    await part(`${tag}: cdm's tiles are its steps' best and mean`, async () => {
    await p.goto(`${base}/runs/${cdm.id}`);
    await p.locator('#cdm-tiles .cdm-tile').nth(7).waitFor(T);
    for (const row of await p.locator('#cdm-tiles .tile-row:not(.head)').all()) {
      const label = (await row.locator('.cdm-label').textContent()).trim();
      for (const dir of ['read', 'write']) {
        const v = figs[`${label} ${dir}`];
        check(v, `${tag}: cdm tile ${label} ${dir} has no step`);
        same(await row.locator(`.cdm-tile.${dir} .best`).textContent(), Math.max(...v), 2, `${tag} cdm ${label} ${dir} best`);
        same(await row.locator(`.cdm-tile.${dir} .mean`).textContent(), v.reduce((a, b) => a + b) / v.length, 2, `${tag} cdm ${label} ${dir} mean`);
      }
    }
    await headersOverCells(p, `${tag} cdm result`);
    await noJoinedSteps(p, cdm, `${tag} cdm`);
    });

    for (const [k] of PRESETS.filter(([k]) => k !== 'cdm')) await part(`${tag}: ${k} opens with its stored result, its charts break at its steps, its tables line up`, async () => {
      const r = runs[k];
      await p.goto(`${base}/runs/${r.id}`);
      await p.locator('#headline').waitFor(T);
      await p.locator('.charts canvas').first().waitFor(T);
      await headersOverCells(p, `${tag} ${k}`);
      await noJoinedSteps(p, r, `${tag} ${k}`);
      const top = await p.locator('#headline').evaluate((e) => e.getBoundingClientRect().top + window.scrollY);
      check(top < vh * 0.75, `${tag} ${k}: the result starts at ${top} px, below the first screen`);
      // A single workload's figures are its stored summary.
      for (const dl of await p.locator('.headline.single dl.facts').all()) {
        const dir = (await dl.locator('dt').first().textContent()).trim();
        same(await dl.locator('dd').first().textContent(), r.summary[dir].mb_s, 1, `${tag} ${k} ${dir} MB/s`);
        same(await dl.locator('dd').nth(1).textContent(), r.summary[dir].iops, 0, `${tag} ${k} ${dir} IOPS`);
      }
      if (k === 'load-latency') {
        // The hockey stick: per depth, p50 and p99 at each step's stored IOPS, lowest first.
        const c = p.locator(`canvas#run-${r.id}-load`);
        await c.waitFor(T);
        const segs = JSON.parse(await c.getAttribute('data-segments'));
        for (const depth of [1, 4]) {
          const st = r.steps.filter((s) => s.spec.iodepth === depth)
            .map((s) => s.summary.read.iops + s.summary.write.iops).filter((x) => x > 0);
          for (const q of ['p50', 'p99']) {
            const s = segs.find((x) => x.name === `QD${depth} ${q}`);
            const n = s ? s.segments.reduce((a, g) => a + g[2], 0) : 0;
            check(st.length === 9 && n === st.length, `${tag}: QD${depth} ${q} has ${n} points, the run ${st.length} steps`);
            // To the last bits of a double: the dashboard's JSON reader rounds differently.
            const near = (a, b) => Math.abs(a - b) <= 1e-9 * Math.abs(b);
            check(near(s.segments[0][0], Math.min(...st)) && near(s.segments.at(-1)[1], Math.max(...st)),
              `${tag}: QD${depth} ${q} spans ${s.segments[0][0]}..${s.segments.at(-1)[1]} IOPS, the steps ${Math.min(...st)}..${Math.max(...st)}`);
          }
        }
        await c.screenshot({ path: `${shots}/load-latency-${vw}x${vh}.png` });
      }
      if (k === 'atto') {
        check(await p.locator('canvas[id$="-position"]').count() === 0, `${tag}: atto draws a throughput-by-position chart`);
        const warnings = await p.locator('#warnings li').allTextContents();
        const lines = warnings.map((w) => w.replace(/^\d+ steps \(.*?\): |^step '.*?': /, '').replace(/[\d.]+/g, '#'));
        check(new Set(lines).size === lines.length, `${tag}: atto repeats a warning: ${warnings.join(' | ')}`);
      }
    });

    await part(`${tag}: the history rows are the stored results`, async () => {
    await p.goto(`${base}/history`);
    const cdmRow = await p.locator(`#history tr[data-run="${cdm.id}"] td.result`).textContent(T);
    check(cdmRow.includes(`SEQ1M Q8T1 R ${seqRead.toFixed(0)}`), `${tag}: cdm history row ${cdmRow} (stored SEQ1M Q8T1 read best ${seqRead})`);
    const singleRow = await p.locator(`#history tr[data-run="${runs.single.id}"] td.result`).textContent(T);
    same(singleRow.match(/read ([\d.]+) MB\/s/)?.[1], single.mb_s, single.mb_s >= 100 ? 0 : 1, `${tag} single history row`);
    const fs = runs['full-span'];
    const fsRow = await p.locator(`#history tr[data-run="${fs.id}"] td.result`).textContent(T);
    const fsWrite = fs.steps.find((s) => s.summary.write.ios > 0).summary.write.mb_s;
    const fsRead = fs.steps.find((s) => s.summary.read.ios > 0).summary.read.mb_s;
    same(fsRow.match(/write avg ([\d.]+)/)?.[1], fsWrite, fsWrite >= 100 ? 0 : 1, `${tag} full-span write`);
    same(fsRow.match(/read avg ([\d.]+)/)?.[1], fsRead, fsRead >= 100 ? 0 : 1, `${tag} full-span read`);
    let listed = 0;
    for (const [k] of PRESETS) {
      const row = p.locator(`#history tr[data-run="${runs[k].id}"] td.result`);
      if (await row.count() === 0) continue; // on the history's second page
      listed++;
      const line = (await row.textContent(T)).trim();
      // What the agent stored, in the message: the engine's side of a run that measured nothing.
      const stored = () => JSON.stringify({ status: runs[k].status, summary: runs[k].summary, steps: (runs[k].steps || []).map((s) => [s.name, s.spec.runtime_ms, s.summary]) }).slice(0, 1500);
      check(line.length > 0 && !line.startsWith('nothing measured'), `${tag}: ${k}'s history row reads "${line}"; stored: ${stored()}`);
      if (vw === 1920) console.log(`history ${k}: ${line}`);
    }
    check(listed >= PRESETS.length - 3, `${tag}: only ${listed} preset runs in the history`);
    await headersOverCells(p, `${tag} history`);
    });

    await part(`${tag}: compare matches cdm and a single run on the test they share`, async () => {
    await p.goto(`${base}/compare?runs=${cdm.id},${runs.single.id}`);
    await p.locator('#step-compare tbody tr').first().waitFor(T);
    const note = await p.locator('#compare-note').textContent(T);
    check(note.includes('RND4K Q32T1 read') && note.includes('different kinds'), `${tag}: compare note: ${note}`);
    const rows = await p.locator('#step-compare tbody tr').all();
    check(rows.length > 0 && await p.locator('#ratios').count() === 0, `${tag}: a cdm run and a randread in one whole-run ratio table`);
    const mb = p.locator('#step-compare tr[data-test="RND4K Q32T1 read"][data-metric="MB/s"] td');
    const a = figs['RND4K Q32T1 read'];
    same(await mb.nth(1).textContent(), a.reduce((x, y) => x + y) / a.length, 1, `${tag} compare cdm RND4K Q32T1 read mean`);
    same(await mb.nth(2).textContent(), single.mb_s, 1, `${tag} compare single RND4K Q32T1 read`);
    const gridRead = await p.locator('#cdm-grid tr', { hasText: 'SEQ1M Q8T1' }).locator('td').first().textContent(T);
    same(gridRead, seqRead, 2, `${tag} compare grid SEQ1M Q8T1 read`);
    await headersOverCells(p, `${tag} compare`);
    });
  }

  await part('the kiosk between runs shows the last stored result', async () => {
  const kiosk = await browser.newContext({ viewport: { width: 1920, height: 1080 } }).then((c) => c.newPage());
  pages.kiosk = kiosk;
  await kiosk.goto(`${base}/kiosk?token=${viewer}`);
  const last = runs.quick;
  await kiosk.locator('#kiosk-headline').waitFor(T);
  const kLine = await kiosk.locator('#kiosk-headline').textContent();
  same(kLine.match(/write ([\d.]+) MB\/s/)?.[1], last.summary.write.mb_s, last.summary.write.mb_s >= 100 ? 0 : 1, 'kiosk last result');
  const link = await kiosk.locator('#kiosk-result-link').getAttribute('href');
  check(link === `/runs/${last.id}`, `the kiosk's last result links to ${link}`);
  });

  await part('a probe on the kiosk at 1080p: latency over time, its big figure a stored median, then the stored statistics', async () => {
  const k = await browser.newContext({ viewport: { width: 1920, height: 1080 } }).then((c) => c.newPage());
  pages['kiosk-probe'] = k;
  await k.goto(`${base}/kiosk?token=${viewer}`);
  await k.locator('#kiosk-head').waitFor(T);
  const id = await start({ target: scratch, preset: 'probe', options: { count: 80, idle_ms: '100ms' } });
  await k.waitForFunction(() => document.querySelector('#kiosk-unit')?.textContent === 'median latency', null, T);
  await k.locator('canvas#latency').waitFor(T);
  // Its progress counts the requests it will count: 79 of 4 KiB (not the working set).
  const bytes = await k.locator('#progress-bytes').textContent();
  check(bytes.includes('of 316 KiB'), `the probe's progress reads "${bytes}"`);
  // Twenty requests to a sample (2 s at 100 ms): let another draw, then read the figure
  // and the stored samples.
  await k.waitForTimeout(1000);
  const big = await k.locator('#kiosk-big').textContent();
  await k.screenshot({ path: `${shots}/kiosk-probe-1920x1080.png` });
  const samples = (await (await api(`/api/v1/runs/${id}/samples`)).json()).samples;
  const ns = (v) => (v < 1e3 ? `${v} ns` : v < 1e6 ? `${(v / 1e3).toFixed(1)} µs` : v < 1e9 ? `${(v / 1e6).toFixed(2)} ms` : `${(v / 1e9).toFixed(2)} s`);
  const medians = samples.filter((x) => x.read.ios > 0).map((x) => ns(x.read.lat.p50_ns));
  check(medians.includes(big), `the kiosk's median ${big} is no stored interval's (${medians.slice(-5).join(', ')})`);
  const run = await waitEnd(id);
  const p = run.analysis.probe;
  check(p && p.count === 79 && run.summary.read.ios === 79, `the probe counted ${p?.count}, its summary ${run.summary.read.ios}`);
  const want = `79 requests · min/avg/max/mdev ${ns(p.min_ns)} / ${ns(p.avg_ns)} / ${ns(p.max_ns)} / ${ns(p.mdev_ns)}`;
  check(run.line === want, `the stored line "${run.line}" is not the stored statistics "${want}"`);
  await k.waitForFunction((href) => document.querySelector('#kiosk-result-link')?.getAttribute('href') === href, `/runs/${id}`, T);
  const shown = await k.locator('#kiosk-headline').textContent();
  check(shown === want, `the kiosk's last result reads "${shown}", the stored statistics "${want}"`);
  await k.screenshot({ path: `${shots}/kiosk-probe-end-1920x1080.png` });
  console.log(`kiosk probe: live ${big} median latency; last result ${shown}`);
  });

  const live = await context('live', { width: 1400, height: 1000 });
  await part("cdm's progress at 40 % of its planned time; the live view's end is the stored result, with a link to it", async () => {
  // 8 steps of 1 s with 0.5 s pauses: 11.5 s planned.
  const t0 = Date.now();
  const cdmLive = await start({ target: scratch, preset: 'cdm', options: { count: 1, runtime_ms: '1s', idle_ms: '500ms', size: '64M' } });
  await live.locator('#progress-step').waitFor(T);
  const first = await (await api(`/api/v1/runs/${cdmLive}/samples`)).json();
  const wait = 0.4 * 11500 - (Date.now() - t0) + 300;
  if (wait > 0) await live.waitForTimeout(wait);
  const pct = await live.locator('#progress').evaluate((e) => e.value);
  const stepText = await live.locator('#progress-step').textContent();
  check(pct >= 20 && pct <= 70, `cdm at 40 % of its planned time reads ${pct} % (${stepText})`);
  check(/^(pause before )?step \d of 8: /.test(stepText), `progress says ${stepText}`);
  console.log(`cdm progress at 40 % of planned time: ${pct.toFixed(0)} %, "${stepText}" (${first.samples?.length ?? 0} samples when it showed)`);
  const cdmEnded = await waitEnd(cdmLive);
  await live.locator('#live-result').waitFor(T);
  await live.waitForFunction(() => !document.querySelector('#live-result').textContent.includes('loading'), null, T);
  const endLine = await live.locator('#live-result').textContent();
  const endFigs = cdmFigures(cdmEnded);
  const endSeq = Math.max(...endFigs['SEQ1M Q8T1 read']);
  check(endLine.includes(`SEQ1M Q8T1 R ${endSeq.toFixed(0)}`), `live end reads ${endLine}, stored SEQ1M Q8T1 read ${endSeq}`);
  await live.click('#open-result');
  await live.locator('#cdm-tiles').waitFor(T);
  check(live.url().endsWith(`/runs/${cdmLive}`), `open the result went to ${live.url()}`);
  });

  await part('sustain from the New-test form is a sustain run', async () => {
  await live.goto(`${base}/new`);
  await live.selectOption('#preset', 'sustain');
  await live.fill('#o-rate', '100MB');
  await live.fill('#o-runtime', '2s');
  await live.fill('#o-size', '256M');
  await live.fill('#o-buffer_ms', '500ms');
  check(await live.locator('#f-rate').count() === 0, 'the sustain form shows the custom fields');
  await live.click('#start');
  await live.locator('#live-result').waitFor({ timeout: 30000 });
  const list = await (await api('/api/v1/runs?per_page=1')).json();
  const sus = await waitEnd(list.runs[0].id);
  check(sus.preset === 'sustain', `the form's sustain run is stored as preset ${sus.preset}`);
  check(sus.analysis?.sustain?.buffer_ms === 500, `the form's buffer reached the run: ${JSON.stringify(sus.analysis?.sustain)}`);
  await live.waitForFunction(() => /PASS|FAIL/.test(document.querySelector('#live-result')?.textContent || ''), null, T);
  const susLine = await live.locator('#live-result').textContent();
  same(susLine.match(/([\d.]+) MB\/s achieved/)?.[1], sus.analysis.sustain.achieved_mbps, 0, 'sustain achieved at the live end');
  await live.screenshot({ path: `${shots}/live-end-sustain.png`, fullPage: true });
  });

  await part('files from the New-test form: its tree is the form\'s, its headline the stored rate of each phase, at desktop and phone width', async () => {
  await live.goto(`${base}/new`);
  await live.selectOption('#preset', 'files');
  await live.fill('#target', work);
  await live.fill('#o-streams', '2');
  await live.fill('#o-dirs', '2');
  await live.fill('#o-depth', '2');
  await live.fill('#o-fanout', '3');
  await live.fill('#o-count', '40');
  await live.fill('#o-bs', '8K');
  await live.fill('#o-phases', 'mkdir,create,stat,read,delete,rmdir');
  await live.check('#o-fsync');
  // A bad value is named at its field, and nothing starts.
  await live.fill('#o-depth', 'two');
  await live.waitForFunction(() => document.querySelector('#start').disabled, null, T);
  await live.fill('#o-depth', '2');
  await live.waitForFunction(() => !document.querySelector('#start').disabled, null, T);
  await live.click('#start');
  await live.locator('#live-result').waitFor({ timeout: 30000 });
  const list = await (await api('/api/v1/runs?per_page=1')).json();
  const run = await waitEnd(list.runs[0].id);
  check(run.preset === 'files' && run.status === 'completed', `the form's files run: ${run.preset} ${run.status}`);
  const ops = (s) => s.summary.read.ios + s.summary.write.ios;
  // 2 jobs × (1 + 2 + 6) directories; 2 jobs × 6 leaves × 40 files of 8 KiB, fsynced.
  const want = { mkdir: 18, create: 480, stat: 480, read: 480, delete: 480, rmdir: 18 };
  for (const s of run.steps) {
    const phase = s.name.split(' ')[0];
    check(ops(s) === want[phase], `files ${phase}: ${ops(s)} operations, the tree has ${want[phase]}`);
  }
  const create = run.steps.find((s) => s.name.startsWith('create'));
  check(create.summary.write.bytes === 480 * 8192, `create wrote ${create.summary.write.bytes} B`);
  check(create.spec.files.fsync === true, 'fsync each file reached the run');
  for (const [vw, vh] of [[1920, 1080], [390, 844]]) {
    const p = await context(`files-${vw}x${vh}`, { width: vw, height: vh });
    await p.goto(`${base}/runs/${run.id}`);
    await p.locator('#headline').waitFor(T);
    const line = await p.locator('#headline').textContent();
    for (const s of run.steps) {
      const phase = s.name.split(' ')[0];
      const rate = Math.trunc(s.summary.read.iops + s.summary.write.iops);
      check(line.includes(`${phase} ${rate}/s`), `${vw}: the headline "${line}" lacks ${phase} ${rate}/s`);
      const d = s.files_done;
      const differ = d && d.last.iops > 0 && Math.abs(d.first.iops / d.last.iops - 1) > 0.1;
      if (differ) check(line.includes(`(first done ${Math.trunc(d.first.iops)}/s, last ${Math.trunc(d.last.iops)}/s)`), `${vw}: the headline "${line}" lacks ${phase}'s first/last done ${JSON.stringify(d)}`);
    }
    await p.locator('.charts canvas').first().waitFor(T);
    await headersOverCells(p, `files ${vw}`);
    await noJoinedSteps(p, run, `files ${vw}`);
    await p.screenshot({ path: `${shots}/files-${vw}x${vh}.png`, fullPage: true });
    if (vw === 1920) console.log(`files headline: ${line}`);
  }
  });

  await part('a stream stops with its view: Disconnect closes the WebSocket and nothing reconnects', async () => {
    const ctx = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const q = await ctx.newPage();
    pages.disconnect = q;
    const sockets = [];
    q.on('websocket', (ws) => {
      const s = { url: ws.url(), closed: false, at: Date.now() };
      ws.on('close', () => { s.closed = true; });
      sockets.push(s);
    });
    await q.goto(`${base}/?token=${op}`);
    await q.locator('.role', { hasText: 'operator' }).waitFor(T);
    check(sockets.length >= 1, 'no WebSocket opened');
    await q.click('button:text("Disconnect")');
    const gone = Date.now();
    await q.locator('#token').waitFor(T);
    await q.waitForTimeout(3000);
    const open = sockets.filter((s) => !s.closed);
    const later = sockets.filter((s) => s.at > gone);
    check(open.length === 0, `${open.length} WebSocket(s) still open 3 s after Disconnect`);
    check(later.length === 0, `${later.length} WebSocket(s) opened after Disconnect`);
    console.log(`disconnect: ${sockets.length} socket(s), all closed, none reopened`);
  });

  step = 'every part';
  check(failures.length === 0, `${failures.length} part(s) failed:\n  ${failures.join('\n  ')}`);
  check(errors.length === 0, `page errors: ${errors.join('; ')}`);
  console.log('figures e2e: all steps passed');
} catch (e) {
  await fail('figures e2e', step, e, pages, shots);
} finally {
  await browser.close();
}
