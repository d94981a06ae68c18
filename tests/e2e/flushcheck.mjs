// The dashboard's *Verify after power cut* (Targets tab) against the stored verdict.
// Usage: node flushcheck.mjs BASE_URL OPERATOR_TOKEN VIEWER_TOKEN SHOT_DIR TARGET WITNESS_URL
//        WITNESS_TOKEN SESSION VERDICT_JSON
// The agent at BASE_URL reads TARGET back against the witness's records of SESSION; the page
// must show the verdict, its line and each bad block the CLI's verdict (VERDICT_JSON) lists.
import { readFileSync } from 'node:fs';
import { launch, check, fail } from './harness.mjs';

const [base, op, , shots, target, witness, witnessToken, session, verdictPath] = process.argv.slice(2);
const want = JSON.parse(readFileSync(verdictPath, 'utf8'));
const browser = await launch();
const T = { timeout: 20000 };
const pages = {};
let step = 'start';
try {
  const ctx = await browser.newContext({ viewport: { width: 1920, height: 1080 } });
  const p = await ctx.newPage();
  pages.targets = p;
  const errors = [];
  p.on('pageerror', (e) => errors.push(e.message));
  step = 'the Targets tab has Verify after power cut';
  await p.goto(`${base}/targets?token=${op}`);
  await p.locator('#flush-verify').waitFor(T);
  step = 'the read-back from the form';
  await p.fill('#fv-target', target);
  await p.fill('#fv-witness', witness);
  await p.fill('#fv-token', witnessToken);
  await p.fill('#fv-session', session);
  await p.click('#fv-go');
  await p.locator('#fv-verdict').waitFor(T);
  const verdict = (await p.locator('#fv-verdict').textContent()).trim();
  check(verdict === want.verdict, `the page says ${verdict}, the CLI's verdict ${want.verdict}`);
  const line = (await p.locator('#fv-line').textContent()).trim();
  check(line === want.line, `the page's line "${line}" is not the CLI's "${want.line}"`);
  const rows = await p.locator('#fv-bad li').allTextContents();
  check(rows.length === want.bad.length, `${rows.length} bad blocks shown, the verdict lists ${want.bad.length}`);
  for (const [i, f] of want.bad.entries()) {
    const found = f.found_seq === null ? 'no write of the session' : `write ${f.found_seq}`;
    const text = `${f.state} at offset ${f.offset}: recorded write ${f.recorded_seq}, found ${found}`;
    check(rows[i] === text, `row ${i} reads "${rows[i]}", the verdict's block "${text}"`);
  }
  await p.locator('#flush-verify').scrollIntoViewIfNeeded();
  await p.screenshot({ path: `${shots}/flush-verify-1920x1080.png` });
  check(errors.length === 0, `page errors: ${errors.join('; ')}`);
  console.log(`flush verify: ${verdict}: ${line} (${rows.length} rows)`);
  console.log('flushcheck e2e: all steps passed');
} catch (e) {
  await fail('flushcheck e2e', step, e, pages, shots);
} finally {
  await browser.close();
}
