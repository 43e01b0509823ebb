// The documentation's JavaScript runs (issue 30): every `js` block of docs/web.md and README.md's
// tessera-web examples, executed in node against web/dist as a page at an origin that serves
// third_party/models at /models (as scripts/serve_web.sh does). Each console.log must print what
// the block's `// → ` comments say, in order (whitespace ignored), so a wrong output name or a
// stale value in an example fails here. A block preceded by `<!-- not run: REASON -->` is skipped.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { kRepo, lib } from './helpers.mjs';

const entry = path.join(kRepo, 'web', 'dist', 'tessera.mjs');
const models = lib.modelsDir();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsr-examples-'));
let server, origin;

/** The ```js blocks of a Markdown file: {line, code, skip} (skip: the reason, or false). */
function jsBlocks(file, keep = () => true) {
  const lines = fs.readFileSync(path.join(kRepo, file), 'utf8').split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== '```js') continue;
    const end = lines.indexOf('```', i + 1);
    assert.ok(end > i, `${file}:${i + 1}: unterminated code block`);
    let prev = i - 1;
    while (prev >= 0 && lines[prev].trim() === '') prev--;
    const skip = prev >= 0 && /^<!-- not run: (.+) -->$/.exec(lines[prev].trim());
    const code = lines.slice(i + 1, end).join('\n');
    if (keep(code)) blocks.push({ line: i + 1, code, skip: skip ? skip[1] : false });
    i = end;
  }
  return blocks;
}

/** What the `// → ` comments say console.log prints, in order (the text after the last arrow). */
function expectations(code) {
  const out = [];
  for (const line of code.split('\n')) {
    const k = line.indexOf('// ');
    if (k >= 0 && line.includes('→ ', k)) out.push(line.slice(line.lastIndexOf('→ ') + 2));
  }
  return out;
}

before(async () => {
  server = http.createServer((req, res) => {
    const m = /^\/models\/([^/]+)$/.exec(req.url);
    const file = m && path.join(models, decodeURIComponent(m[1]));
    if (!file || !fs.existsSync(file)) { res.writeHead(404).end(); return; }
    const bytes = fs.readFileSync(file);
    res.writeHead(200, { 'Content-Length': bytes.length }).end(bytes);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${server.address().port}`;
});
after(() => { server.close(); fs.rmSync(dir, { recursive: true, force: true }); });

const sources = [
  ['docs/web.md', jsBlocks('docs/web.md')],
  ['README.md', jsBlocks('README.md', (code) => code.includes("from 'tessera-web'"))],
];

test('the documentation has the examples this test expects', () => {
  assert.ok(sources[0][1].filter((b) => !b.skip).length >= 1, 'docs/web.md: no runnable js block');
  assert.equal(sources[1][1].length, 2, 'README.md: the two tessera-web blocks (running a model, training one)');
  for (const [file, blocks] of sources)
    for (const b of blocks.filter((x) => !x.skip))
      assert.ok(expectations(b.code).length >= 1, `${file}:${b.line}: no "// → " comment checks what the example prints`);
});

for (const [file, blocks] of sources) {
  for (const b of blocks) {
    const skip = b.skip ? `not run: ${b.skip}` : !fs.existsSync(entry) ? `${entry} missing (bash web/build.sh)` : false;
    test(`${file}:${b.line}: the example runs and prints what its comments say`, { skip, timeout: 120000 }, async () => {
      const script = path.join(dir, `${path.basename(file)}-${b.line}.mjs`);
      fs.writeFileSync(script, [
        "import { formatWithOptions } from 'node:util';",
        `globalThis.location = new URL('${origin}/');  // the page's origin: relative URLs resolve here`,
        "console.log = (...a) => process.stdout.write(formatWithOptions({ breakLength: Infinity }, ...a) + '\\n');",
        b.code.replaceAll("from 'tessera-web'", `from '${pathToFileURL(entry)}'`),
      ].join('\n'));
      const { stdout, stderr, code } = await new Promise((resolve) => {
        execFile(process.execPath, [script], { timeout: 110000 }, (err, stdout, stderr) => resolve({ stdout, stderr, code: err ? err.code ?? err.signal : 0 }));
      });
      assert.equal(code, 0, `${file}:${b.line} failed:\n${stderr}`);
      const squash = (s) => s.replace(/\s+/g, '');
      const printed = stdout.split('\n').filter((l) => l !== '');
      assert.deepEqual(printed.map(squash), expectations(b.code).map(squash),
        `${file}:${b.line}: printed\n${printed.join('\n')}\nexpected (// → comments)\n${expectations(b.code).join('\n')}`);
    });
  }
}
