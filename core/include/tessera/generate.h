// tsr::generate: autoregressive decoding of a decoder-with-past model over a Session, with a
// KV cache (public C++ API; docs/api.md "Generation").
//
//   auto model = tsr::Model::load("decoder.onnx");          // after tsr::enable_onnx_import()
//   auto session = tsr::Session::create(*model);
//   tsr::GenerateOptions options;
//   options.max_new_tokens = 64;
//   options.top_k = 40; options.temperature = 0.8f; options.seed = 7;   // top_k 0: greedy
//   auto ids = tsr::generate(**session, {15496, 11, 314}, options,
//                            [](int64_t id) { std::cout << id << " " << std::flush; return true; });
//   // ids: Expected<std::vector<int64_t>>, the new tokens (the prompt not included)
//
// The model contract (the transformers.js / Optimum "decoder with past" export):
//   inputs   input_ids              int64 or int32 [1, S]
//            <past>{name}           float32 or float16, e.g. past_key_values.0.key [1, heads, P, head_dim]
//            attention_mask         (optional) int64 or int32 [1, P + S], fed all ones
//            position_ids           (optional) int64 or int32 [1, S], fed P .. P + S - 1
//   outputs  logits                 float32 or float16 [1, S, vocab] (or [1, vocab]: the last row)
//            <present>{name}        the past input of the same {name} grown by S along its
//                                   sequence axis, e.g. present.0.key [1, heads, P + S, head_dim]
// Every past input's dims other than batch (dim 0, fed 1) and one sequence axis must be static in
// the model: the first step (the prefill, S = prompt length) feeds pasts of length 0, which
// Tessera represents as empty tensors. The pairing past -> present is by name: an input
// `<past_prefix>X` takes the output `<present_prefix>X` of the previous step.
//
// The loop: step 0 runs the whole prompt with empty pasts; each later step runs the one token
// chosen last. The present tensors a step returns become the next step's past inputs by handle:
// Session::run returns outputs that own their storage (never an arena shared with the next run),
// so they are passed on without a copy. The growing cache is copied once per step by the model
// itself (its Concat(past, new)); the loop adds no copy. Each step's past length is a new input
// signature for the Session's plans (core/exec/plan.h): every step is a first, recording run of
// its shapes (runtime shape inference), none reuses a recorded memory plan.
//
// Choosing a token from the last logits row: greedy (top_k 0) takes the argmax, the lowest id on
// ties. top_k >= 1 keeps the k largest logits (ties: lower id first), divides them by temperature,
// and draws from their softmax with u in [0, 1) from a splitmix64 stream seeded with `seed`
// (u = (next() >> 11) * 2^-53; the pick is the first token whose running sum of
// exp((l - l_max) / T) exceeds u times the total, in double precision). The same seed, model and
// prompt give the same ids run to run; tessera-web's model.generate() uses the same stream.
//
// Stopping: after max_new_tokens tokens, after emitting a token of stop_tokens (it is included in
// the result and passed to the callback), or when the callback returns false (the token it was
// given is included).
//
// Errors (Status codes as Session's): kInvalidArgument for an empty prompt, a negative
// max_new_tokens or top_k, a temperature that is not finite and > 0, a NaN logit, a past input
// whose shape has no single sequence axis, a model input the loop cannot feed (named), or an
// input/output dtype it does not handle; kNotFound when the model lacks input_ids, logits, any
// past input, or a past input's present output (the message lists the model's names); and any
// error of Session::run, with the step number as context.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "tessera/session.h"

namespace tsr {

struct GenerateOptions {
  // Tokens to generate at most (0: none, the model is not run).
  int64_t max_new_tokens = 32;
  // 0: greedy. >= 1: sample among the top_k most likely tokens (top_k >= vocab: all of them).
  int64_t top_k = 0;
  // Divides the logits before the softmax of top-k sampling (> 0; < 1 sharpens, > 1 flattens).
  float temperature = 1.0f;
  // Seeds top-k sampling's splitmix64 stream.
  uint64_t seed = 0;
  // Generation stops after any of these ids.
  std::vector<int64_t> stop_tokens;
  // Names. Empty past_prefix / present_prefix: detected from the model's input names, the first
  // pair with at least one input starting with the past prefix: "past_key_values." / "present."
  // (Optimum, transformers.js), then "past_" / "present_" (past_key_0 -> present_key_0).
  std::string input_ids = "input_ids";
  std::string logits = "logits";
  std::string past_prefix;
  std::string present_prefix;
  // Fed when the model has an input of this name (see the contract above).
  std::string attention_mask = "attention_mask";
  std::string position_ids = "position_ids";
};

// Called once per generated token, in order; return false to stop after this token.
using TokenCallback = std::function<bool(int64_t token)>;

// Runs the loop above on `session` (used by this thread only, as Session::run). Returns the
// generated ids, without the prompt.
Expected<std::vector<int64_t>> generate(Session& session, const std::vector<int64_t>& prompt,
                                        const GenerateOptions& options = {}, const TokenCallback& on_token = {});

}  // namespace tsr
