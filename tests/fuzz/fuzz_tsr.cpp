// libFuzzer harness: the .tsr loader (FlatBuffers Verifier, format checks, passes::verify_model), then
// a Session on the loaded model run once on small deterministic inputs of the declared types.
// Any Status is a correct outcome; a crash, sanitizer report, leak or hang is a bug.
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "tessera/session.h"
#include "core/io/tsr_io.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The loader wants 64-byte-aligned bytes to use constants in place; give it an aligned copy
  // kept alive by the model (as load_model_file's mapping is).
  std::shared_ptr<uint8_t[]> buf(new (std::align_val_t{64}) uint8_t[size + 1],
                                 [](uint8_t* p) { operator delete[](p, std::align_val_t{64}); });
  if (size) std::memcpy(buf.get(), data, size);
  auto model = tsr::io::load_model_buffer(buf.get(), size, buf);
  if (!model.ok()) return 0;
  auto shared = std::make_shared<const tsr::ir::Model>(std::move(model).value());
  tsr::SessionOptions opts;
  opts.max_loop_iterations = tsr::fuzz::kMaxLoopIterations;  // a runaway Loop is an error, not a hang
  opts.max_memory_bytes = 512u << 20;  // a huge tensor is an error, not libFuzzer's 2 GB OOM
  auto session = tsr::Session::create(shared, opts);
  if (!session.ok()) return 0;
  std::vector<tsr::Tensor> inputs;
  const tsr::ir::Graph& g = shared->main();
  uint64_t seed = tsr::fuzz::hash(data, size);
  for (int32_t id : g.inputs) {
    auto t = tsr::fuzz::small_input(g.tensors[static_cast<size_t>(id)], &seed);
    if (!t.ok()) return 0;  // a declared shape too large to feed
    inputs.push_back(std::move(t).value());
  }
  auto out = (*session)->run(inputs);
  (void)out;
  return 0;
}
