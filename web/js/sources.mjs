// load()'s sources: model and external-data bytes from bytes, a URL, a file path (node) or a Response.
import { TesseraError, argError } from './errors.mjs';

export const kIsNode = typeof process === 'object' && process.versions != null && process.versions.node != null;


export const now = () => (globalThis.performance ?? Date).now();

/** A URL for a string or URL: absolute as given; relative to `base` (the model's URL for its
 *  external data), else to the page (globalThis.location), else in node to the working
 *  directory (a file path), else to this module. */
export async function resolveUrl(s, base) {
  if (s instanceof URL) return s;
  try { return new URL(s); } catch { /* relative */ }
  if (base) return new URL(s, base);
  if (globalThis.location?.href) return new URL(s, globalThis.location.href);
  if (kIsNode) {
    const [{ pathToFileURL }, path] = await Promise.all([import('node:url'), import('node:path')]);
    return pathToFileURL(path.resolve(s));
  }
  return new URL(s, import.meta.url);
}

/** The body of a fetch() Response, read chunk by chunk with onProgress({url, loaded, total})
 *  (total: Content-Length, or null when the server does not send it). */
export async function readResponse(r, url, onProgress) {
  if (!r.ok) throw new TesseraError('not_found', `${url}: HTTP ${r.status}${r.statusText ? ` ${r.statusText}` : ''}`);
  const total = Number(r.headers?.get('content-length')) || null;
  if (!r.body || typeof r.body.getReader !== 'function') {
    const bytes = new Uint8Array(await r.arrayBuffer());
    onProgress?.({ url, loaded: bytes.length, total: total ?? bytes.length });
    return bytes;
  }
  const reader = r.body.getReader();
  // Chunks, then one copy: a compressed response's Content-Length is not the length of its body.
  const chunks = [];
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.length;
    onProgress?.({ url, loaded, total });
  }
  const bytes = chunks.length === 1 ? chunks[0] : new Uint8Array(loaded);
  if (chunks.length !== 1) for (let k = 0, at = 0; k < chunks.length; at += chunks[k++].length) bytes.set(chunks[k], at);
  if (loaded === 0 || total !== loaded) onProgress?.({ url, loaded, total: loaded });
  return bytes;
}

/** A file: URL in node, streamed with the same progress reports. */
export async function readFileUrl(url, onProgress) {
  const fs = await import('node:fs');
  let total;
  try {
    total = (await fs.promises.stat(url)).size;
  } catch (e) {
    throw new TesseraError('not_found', `${url}: ${e.code === 'ENOENT' ? 'file not found' : e.message}`);
  }
  const bytes = new Uint8Array(total);
  let loaded = 0;
  for await (const chunk of fs.createReadStream(url)) {
    bytes.set(chunk.subarray(0, total - loaded), loaded);
    loaded += chunk.length;
    onProgress?.({ url: String(url), loaded, total });
  }
  if (total === 0) onProgress?.({ url: String(url), loaded, total });
  return loaded === total ? bytes : bytes.subarray(0, loaded);
}

/** {bytes, name, url} of a load() source: bytes, an ArrayBuffer, a Response, a URL, a string (a
 *  URL; in node also a file path). */
export async function readSource(source, what, onProgress, base) {
  if (source instanceof Uint8Array) return { bytes: source, name: null, url: null };
  if (source instanceof ArrayBuffer) return { bytes: new Uint8Array(source), name: null, url: null };
  if (ArrayBuffer.isView(source)) return { bytes: new Uint8Array(source.buffer, source.byteOffset, source.byteLength), name: null, url: null };
  const fileName = (u) => decodeURIComponent(u.pathname.split('/').pop() || '') || null;
  if (typeof Response === 'function' && source instanceof Response) {
    const url = source.url ? new URL(source.url) : null;
    return { bytes: await readResponse(source, source.url || what, onProgress), name: url && fileName(url), url };
  }
  if (typeof source !== 'string' && !(source instanceof URL))
    throw argError(`${what}: expected a URL, a file path (node), a Response, a Uint8Array or an ArrayBuffer, got ${source === null ? 'null' : typeof source === 'object' ? source.constructor?.name ?? 'object' : typeof source}`);
  const url = await resolveUrl(source, base);
  if (kIsNode && url.protocol === 'file:') return { bytes: await readFileUrl(url, onProgress), name: fileName(url), url };
  let r;
  try {
    r = await fetch(url);
  } catch (e) {
    throw new TesseraError('not_found', `${url}: ${e.cause?.message ?? e.message}`);
  }
  return { bytes: await readResponse(r, String(url), onProgress), name: fileName(url), url };
}
