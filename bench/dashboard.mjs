// Dashboard figures in headless Chromium: time to the first live chart with data, and the
// chart redraw time for a 24-hour run at 1 s intervals (86,400 points x 4 series).
// Usage: node bench/dashboard.mjs BASE_URL TOKEN   (a run should be going on the agent)
import { createRequire } from 'node:module';
const require = createRequire(new URL('../tests/e2e/package.json', import.meta.url));
const { chromium } = require('playwright-core');

const [base, token] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
try {
  const firsts = [];
  for (let i = 0; i < 5; i++) {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${base}/?token=${token}`);
    await page.waitForFunction(() => performance.getEntriesByName('diskscope-first-chart').length > 0, null, { timeout: 30000 });
    firsts.push(await page.evaluate(() => performance.getEntriesByName('diskscope-first-chart')[0].startTime));
    await page.close();
  }
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${base}/?token=${token}`);
  await page.locator('.role').waitFor();
  const redraws = await page.evaluate(async () => {
    const c = document.createElement('canvas');
    c.id = 'bench-canvas'; c.width = 960; c.height = 300;
    document.body.appendChild(c);
    const m = await import('/pkg/frontend.js');
    return Array.from(await m.bench_chart('bench-canvas', 86400, 4, 30));
  });
  const warm = redraws.slice(5);
  const out = {
    first_chart_ms_median: median(firsts), first_chart_ms: firsts,
    redraw_86400x4_ms_median: median(warm), redraw_ms_max: Math.max(...warm), rounds: warm.length,
  };
  console.log(JSON.stringify(out, null, 2));
} finally {
  await browser.close();
}
