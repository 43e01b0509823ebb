// A static file server for web/ on localhost with the headers the package wants:
// Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp (so
// `crossOriginIsolated` is true and the threads build can use SharedArrayBuffer), and the MIME
// types of .mjs/.wasm. Used by scripts/serve_web.sh and tests/web/.
//   node web/tools/serve.mjs [--port N] [--root DIR] [--mount /PREFIX=DIR]...
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const kTypes = {
  '.html': 'text/html; charset=utf-8', '.mjs': 'text/javascript', '.js': 'text/javascript',
  '.wasm': 'application/wasm', '.json': 'application/json', '.txt': 'text/plain; charset=utf-8',
  '.png': 'image/png', '.jpg': 'image/jpeg', '.css': 'text/css', '.onnx': 'application/octet-stream',
  '.tsr': 'application/octet-stream', '.ts': 'text/plain',
};

/** Starts the server; resolves to {server, port, url}. mounts: [[prefix, dir]], first match wins.
 *  isolate: false leaves out COOP/COEP (a page that is not cross-origin isolated, for tests). */
export function serve({ root, mounts = [], port = 0, host = '127.0.0.1', isolate = true }) {
  const all = [...mounts.map(([p, d]) => [p.replace(/\/$/, ''), path.resolve(d)]), ['', path.resolve(root)]];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    let rel = decodeURIComponent(url.pathname);
    const [prefix, dir] = all.find(([p]) => p === '' || rel === p || rel.startsWith(p + '/'));
    rel = rel.slice(prefix.length);
    let file = path.join(dir, path.normalize(rel));
    if (!file.startsWith(dir)) { res.writeHead(403).end('forbidden'); return; }
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, 'index.html');
    fs.readFile(file, (err, body) => {
      if (err) { res.writeHead(404, { 'Content-Type': 'text/plain' }).end(`not found: ${url.pathname}`); return; }
      const isolation = isolate ? {
        'Cross-Origin-Opener-Policy': 'same-origin',
        'Cross-Origin-Embedder-Policy': 'require-corp',
        'Cross-Origin-Resource-Policy': 'same-origin',
      } : {};
      res.writeHead(200, {
        'Content-Type': kTypes[path.extname(file)] ?? 'application/octet-stream',
        ...isolation,
        'Cache-Control': 'no-cache',
      });
      res.end(body);
    });
  });
  return new Promise((resolve, reject) => {
    server.on('error', reject);
    server.listen(port, host, () => {
      const p = server.address().port;
      resolve({ server, port: p, url: `http://${host === '0.0.0.0' ? 'localhost' : host}:${p}/` });
    });
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const args = process.argv.slice(2);
  const opt = (name, def) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : def; };
  const mounts = [];
  args.forEach((a, i) => { if (a === '--mount') { const [p, d] = args[i + 1].split('='); mounts.push([p, d]); } });
  const { url } = await serve({ root: opt('--root', '.'), mounts, port: Number(opt('--port', '8080')) });
  console.log(`serving ${path.resolve(opt('--root', '.'))} at ${url}`);
  console.log(`OCR page: ${url}examples/ocr/`);
}
