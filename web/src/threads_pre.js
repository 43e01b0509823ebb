// --pre-js of tessera-threads-core.mjs (web/CMakeLists.txt). Emscripten 3.1.6's node code uses
// CommonJS names that an ES module lacks: `require` comes from the JS API on the main thread
// (Module.nodeRequire, node only) and from tessera-threads-core.worker.js on pthread Workers (it
// sets a global require); `__dirname` only locates files, and the JS API passes the wasm itself.
// In browsers both stay undefined and unused.
var require = Module['nodeRequire'] || globalThis.require, __dirname = '';
