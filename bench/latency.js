// Latency and peak memory of tessera vs onnxruntime-node on the real models of
// tests/models/models.json (or another model table: --manifest, e.g. the zoo's, bench/zoo), at 1
// and 2 threads, same seeded inputs, in alternating rounds.
// Prints a markdown table (stdout) and optionally writes the raw figures as JSON.
//
// Usage: /usr/bin/node bench/latency.js [--tessera PATH] [--rounds 3] [--repeat 10] [--warmup 2]
//          [--threads 1,2] [--models a,b,...] [--work-dir build/bench] [--json OUT.json]
//          [--compare BEFORE.json] [--tessera-args "--no-optimize"] [--baseline OTHER_TESSERA]
//          [--manifest MODELS.json (default tests/models/models.json)]
//          [--model-dir DIR (the table's files; default $TSR_MODELS_DIR or third_party/models)]
// Needs: the models (third_party/models/fetch.sh), onnxruntime-node (scripts/install_deps.sh),
// GNU time (/usr/bin/time, for peak RSS) and a release build of the CLI.
//
// Each round runs, for every model and thread count, onnxruntime (bench/ort_child.js, its own
// process) and then `tessera run` (its own process), WARMUP untimed runs then REPEAT timed ones
// each; a round's figure is the median of its timed runs and the reported latency the median
// over rounds. Alternating in rounds spreads the noise of a shared machine over both runtimes.
// Peak RSS is the largest maximum resident set size of each runtime's processes (GNU time %M).
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const lib = require('../tests/models/lib.js');

function arg(name, def) {
  const i = process.argv.indexOf('--' + name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : def;
}

function findTessera() {
  const given = arg('tessera');
  if (given) return path.resolve(given);
  for (const p of ['build/release/tools/cli/tessera', 'build/release/tessera', 'build/release/bin/tessera']) {
    const f = path.join(lib.kRepo, p);
    if (fs.existsSync(f)) return f;
  }
  throw new Error('tessera executable not found under build/release: build it or pass --tessera PATH');
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

const geomean = xs => Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length);

/** Runs cmd under GNU time; returns {out, maxrss_kb}. Throws with the output on failure. */
function timed(cmd, args) {
  const rssFile = path.join(os.tmpdir(), `tsr-bench-rss-${process.pid}.txt`);
  const r = spawnSync('/usr/bin/time', ['-f', '%M', '-o', rssFile, cmd, ...args],
                      { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.error) throw new Error(`/usr/bin/time ${cmd}: ${r.error.message} (install GNU time)`);
  if (r.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}):\n${r.stdout}${r.stderr}`);
  }
  const rss = Number(fs.readFileSync(rssFile, 'utf8').trim().split('\n').pop());
  fs.unlinkSync(rssFile);
  return { out: r.stdout + r.stderr, maxrss_kb: rss };
}

function runOrt(onnx, threads, warmup, repeat, feeds) {
  const r = timed(process.execPath, [path.join(__dirname, 'ort_child.js'), onnx, String(threads),
    String(warmup), String(repeat), ...feeds]);
  const line = r.out.split('\n').find(l => l.startsWith('{'));
  if (!line) throw new Error('ort_child printed no result:\n' + r.out);
  const j = JSON.parse(line);
  return { ms: median(j.times_ms), maxrss_kb: r.maxrss_kb, base_rss_kb: j.base_rss_kb };
}

// Whether this tessera knows `run --warmup` (older builds, e.g. a BEFORE binary, do not: their
// first timed run then includes the warm-up, which the median over --repeat runs mostly absorbs).
function hasWarmup(tessera) {
  const r = spawnSync(tessera, ['run', '--help'], { encoding: 'utf8' });
  return /--warmup/.test((r.stdout || '') + (r.stderr || ''));
}

function runTessera(tessera, tsr, threads, warmup, repeat, feeds, extra) {
  const args = ['run', tsr, '--threads', String(threads), '--repeat', String(repeat), ...extra];
  if (warmup > 0) args.push('--warmup', String(warmup));
  for (const f of feeds) args.push('--input', f);
  const r = timed(tessera, args);
  const m = /median[^0-9\n]*([0-9]+(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?)\s*ms/i.exec(r.out);
  if (!m) throw new Error(`no "median ... ms" in the output of tessera run:\n${r.out}`);
  return { ms: Number(m[1]), maxrss_kb: r.maxrss_kb };
}

function printTable(res, threadList, before) {
  const fmt = (x, d = 2) => (x === undefined ? '–' : x.toFixed(d));
  const base = res.baseline !== undefined;
  let head = '| model | input |';
  let rule = '| --- | --- |';
  for (const t of threadList) {
    head += ` ORT ${t}t (ms) | tessera ${t}t (ms) | ratio ${t}t |` + (before ? ` before ${t}t |` : '') +
            (base ? ` baseline ${t}t (ms) | baseline ratio ${t}t |` : '');
    rule += ' ---: | ---: | ---: |' + (before ? ' ---: |' : '') + (base ? ' ---: | ---: |' : '');
  }
  head += ' ORT peak RSS (MB) | tessera peak RSS (MB) |';
  rule += ' ---: | ---: |';
  console.log(head);
  console.log(rule);
  const ratios = {};
  const beforeRatios = {};
  const baseRatios = {};
  for (const r of res.models) {
    let line = `| ${r.name} | ${r.shape} |`;
    for (const t of threadList) {
      const x = r.threads[t];
      const ratio = x.tessera_ms / x.ort_ms;
      (ratios[t] = ratios[t] || []).push(ratio);
      line += ` ${fmt(x.ort_ms, 3)} | ${fmt(x.tessera_ms, 3)} | ${fmt(ratio)} |`;
      if (before) {
        const b = before.models.find(m => m.name === r.name);
        const bx = b && b.threads[t];
        const br = bx ? bx.tessera_ms / bx.ort_ms : undefined;
        if (br !== undefined) (beforeRatios[t] = beforeRatios[t] || []).push(br);
        line += ` ${fmt(br)} |`;
      }
      if (base) {
        const bratio = x.baseline_ms / x.ort_ms;
        (baseRatios[t] = baseRatios[t] || []).push(bratio);
        line += ` ${fmt(x.baseline_ms, 3)} | ${fmt(bratio)} |`;
      }
    }
    line += ` ${fmt(r.ort_rss_kb / 1024, 1)} | ${fmt(r.tessera_rss_kb / 1024, 1)} |`;
    console.log(line);
  }
  console.log('');
  for (const t of threadList) {
    if (!ratios[t]) continue;
    const worst = Math.max(...ratios[t]);
    const worstName = res.models[ratios[t].indexOf(worst)].name;
    let s = `${t} thread(s): geo-mean ratio tessera/onnxruntime ${fmt(geomean(ratios[t]))}, worst ${fmt(worst)} (${worstName})`;
    if (before && beforeRatios[t]) s += `; before: geo-mean ${fmt(geomean(beforeRatios[t]))}`;
    if (base && baseRatios[t]) s += `; baseline (same rounds): geo-mean ${fmt(geomean(baseRatios[t]))}`;
    console.log(s + '.');
  }
}

// The flags above (each takes a value); anything else is a typo and stops the script, instead of
// silently running with the defaults (e.g. --out for --json would drop the figures).
const kFlags = ['tessera', 'rounds', 'repeat', 'warmup', 'threads', 'models', 'work-dir', 'json', 'compare',
                'tessera-args', 'baseline', 'manifest', 'model-dir'];

async function main() {
  for (let i = 2; i < process.argv.length; i += 2) {
    const a = process.argv[i];
    if (!a.startsWith('--') || !kFlags.includes(a.slice(2)) || i + 1 >= process.argv.length) {
      console.error(`bench/latency.js: unknown or incomplete argument ${a} (flags: ${kFlags.map(f => '--' + f).join(' ')}, each with a value)`);
      process.exit(2);
    }
  }
  const rounds = Number(arg('rounds', '3'));
  const repeat = Number(arg('repeat', '10'));
  const warmup = Number(arg('warmup', '2'));
  const threadList = arg('threads', '1,2').split(',').map(Number);
  const extra = (arg('tessera-args', '') || '').split(' ').filter(s => s);
  const work = path.resolve(arg('work-dir', path.join(lib.kRepo, 'build', 'bench')));
  const only = arg('models');
  const tessera = findTessera();
  // --baseline PATH: a second tessera binary (e.g. main's build) run right after the first in
  // every round, for an A/B under the same machine load.
  const baseline = arg('baseline');
  if (baseline && !fs.existsSync(baseline)) throw new Error(`--baseline ${baseline}: no such file`);
  let models = lib.loadModels(arg('manifest'));
  const modelDir = arg('model-dir', lib.modelsDir());
  // Every model, including those whose accuracy test is disabled ("enabled": false): speed is still measured.
  models = only ? models.filter(m => only.split(',').includes(m.name)) : models;
  fs.mkdirSync(work, { recursive: true });
  const tsrWarmup = hasWarmup(tessera) ? warmup : 0;
  if (!tsrWarmup && warmup) console.error(`${tessera} has no run --warmup: its first timed run includes the warm-up`);

  // Prepare: inputs as .npy, each model converted once (conversion is not timed).
  const prepared = [];
  for (const model of models) {
    const onnx = path.join(modelDir, model.file);
    if (!fs.existsSync(onnx)) { console.error(`skip ${model.name}: ${onnx} absent`); continue; }
    const dir = path.join(work, model.name);
    fs.mkdirSync(dir, { recursive: true });
    const inputs = lib.makeInputs(model, 1234);
    const feeds = inputs.map((t, k) => {
      const f = path.join(dir, `input_${k}.npy`);
      lib.writeNpy(f, t.dtype, t.shape, t.data);
      return `${t.name}=${f}`;
    });
    const tsr = path.join(dir, model.name + '.tsr');
    timed(tessera, ['convert', onnx, '-o', tsr]);
    prepared.push({ model, onnx, tsr, feeds, shape: inputs.map(t => `[${t.shape.join(',')}]`).join(' ') });
  }

  const samples = {};  // name -> threads -> {ort:[], tsr:[]}
  const rss = {};      // name -> {ort, tsr, base}
  for (let round = 0; round < rounds; round++) {
    for (const p of prepared) {
      for (const t of threadList) {
        const o = runOrt(p.onnx, t, warmup, repeat, p.feeds);
        const s = runTessera(tessera, p.tsr, t, tsrWarmup, repeat, p.feeds, extra);
        const b = baseline ? runTessera(baseline, p.tsr, t, hasWarmup(baseline) ? warmup : 0, repeat, p.feeds, extra) : null;
        const slot = ((samples[p.model.name] = samples[p.model.name] || {})[t] = samples[p.model.name][t] || { ort: [], tsr: [], base: [] });
        slot.ort.push(o.ms);
        slot.tsr.push(s.ms);
        if (b) slot.base.push(b.ms);
        const m = (rss[p.model.name] = rss[p.model.name] || { ort: 0, tsr: 0, base: 0 });
        m.ort = Math.max(m.ort, o.maxrss_kb);
        m.tsr = Math.max(m.tsr, s.maxrss_kb);
        m.base = Math.max(m.base, o.base_rss_kb);
        console.error(`round ${round + 1}/${rounds} ${p.model.name} ${t}t: onnxruntime ${o.ms.toFixed(3)} ms, tessera ${s.ms.toFixed(3)} ms` +
                      (b ? `, baseline ${b.ms.toFixed(3)} ms` : ''));
      }
    }
  }

  const cpu = (os.cpus()[0] || {}).model || 'unknown CPU';
  const res = { cpu, rounds, repeat, warmup, tessera_args: extra, date: new Date().toISOString(), models: [] };
  if (baseline) res.baseline = baseline;
  for (const p of prepared) {
    const r = { name: p.model.name, shape: p.shape, threads: {}, ort_rss_kb: rss[p.model.name].ort,
                tessera_rss_kb: rss[p.model.name].tsr, node_base_rss_kb: rss[p.model.name].base };
    for (const t of threadList) {
      const s = samples[p.model.name][t];
      r.threads[t] = { ort_ms: median(s.ort), tessera_ms: median(s.tsr), ort_rounds: s.ort, tessera_rounds: s.tsr };
      if (baseline) Object.assign(r.threads[t], { baseline_ms: median(s.base), baseline_rounds: s.base });
    }
    res.models.push(r);
  }
  const jsonOut = arg('json');
  if (jsonOut) fs.writeFileSync(jsonOut, JSON.stringify(res, null, 1) + '\n');
  const beforeFile = arg('compare');
  const before = beforeFile ? JSON.parse(fs.readFileSync(beforeFile, 'utf8')) : null;

  const baseMb = Math.max(...res.models.map(m => m.node_base_rss_kb)) / 1024;
  console.log(`Median over ${rounds} alternating rounds of the median of ${repeat} runs (after ${warmup} warm-up), ` +
              `${cpu}, onnxruntime-node 1.30.0 (CPU EP, all graph optimizations, intra-op threads = t, inter-op 1)` +
              (extra.length ? `, tessera run ${extra.join(' ')}` : '') + '.');
  console.log(`Peak RSS is each process's maximum resident set (GNU time); onnxruntime's includes node itself ` +
              `(about ${baseMb.toFixed(0)} MB before onnxruntime is loaded).\n`);
  printTable(res, threadList, before);
}

main().catch(e => { console.error('latency: ' + (e && e.message ? e.message : e)); process.exit(1); });
