// Tessera public C++ API: load a .tsr model, create a Session, run it.
//
//   auto model = tsr::io::load_model_file("model.tsr");          // verified, Expected<ir::Model>
//   auto session = tsr::Session::create(std::make_shared<tsr::ir::Model>(std::move(*model)));
//   auto outputs = (*session)->run({tsr::Tensor::from<float>({1, 3}, {1, 2, 3})});
//
// Errors are Status / Expected values (core/base/status.h); nothing throws.
#pragma once

#include "core/base/status.h"
#include "core/exec/session.h"
#include "core/ops/graph_builder.h"
#include "core/io/tsr_io.h"
#include "core/ir/graph.h"
#include "core/ir/verify.h"
#include "core/tensor/tensor.h"
