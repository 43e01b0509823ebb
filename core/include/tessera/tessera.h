// Tessera public C++ API: load a model, create a Session, run it.
//
//   #include "tessera/tessera.h"
//   auto model = tsr::Model::load("model.tsr");                 // tsr::Expected<tsr::Model>
//   if (!model.ok()) { std::cerr << model.status().message() << "\n"; return 1; }
//   tsr::SessionOptions options;                                 // optimization kAll, limits on
//   options.num_threads = 2;
//   auto session = tsr::Session::create(*model, options);
//   auto outputs = (*session)->run({{"x", tsr::Tensor::from<float>({1, 3}, {1, 2, 3})}});
//
// Headers: tessera/model.h (Model, ValueInfo), tessera/session.h (Session, SessionOptions,
// NamedTensors), tessera/generate.h (generate: KV-cache decoding), core/tensor/tensor.h (Tensor, DType, Shape), core/base/status.h (Status,
// Expected). Separately: tessera/onnx.h (ONNX import, library tessera_onnx), tessera/eager.h (eager
// tensors with autograd), tessera/tessera_c.h (the C API). Errors are Status / Expected values;
// nothing throws.
#pragma once

#include "core/base/status.h"
#include "core/tensor/tensor.h"
#include "tessera/model.h"
#include "tessera/session.h"
#include "tessera/generate.h"
