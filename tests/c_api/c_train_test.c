/* Tests of the C API's training functions (tessera_c.h "Training"), in C11.
 *
 *   tessera_c_train_test DIR [--compare-cli]
 *
 * DIR is written by tests/c_api/prepare_train_model.py: net.tsr (an inference MLP), train.tsr
 * (`tessera prepare-training` of it: sgd, momentum 0.9, lr 0.05, fc1.* frozen), x.npy / y.npy
 * (one sample), cli_checkpoint.tsr (`tessera train` after three steps on that sample).
 * Checks: three C steps give bit-identical weights to the CLI's (with --compare-cli: the same
 * build of the library, so the same float operations; a cross or sanitizer build differs in
 * rounding from the host CLI), tsr_prepare_training with the same spec gives the same training,
 * eval equals the step's loss before the update, learning rate 0 keeps the weights, checkpoint
 * to bytes and back resumes bit-identically, the exported model equals infer, and the error
 * paths (NULL and freed handles, wrong counts, labels dtype, bad rates, mismatched checkpoints).
 * Exit status: 0 pass, 1 fail, 77 when DIR was not prepared. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "npy.h"
#include "tessera/tessera_c.h"

/* Checks that `err` holds `code` and a message containing `text`, prints and frees it. */
static void expect_error(tsr_error** err, int code, const char* text, const char* what) {
  ++g_checks;
  if (!*err) {
    fprintf(stderr, "FAIL %s: no error reported (expected code %d)\n", what, code);
    ++g_failures;
    return;
  }
  const char* msg = tsr_error_message(*err);
  if (tsr_error_code(*err) != code || !strstr(msg, text)) {
    fprintf(stderr, "FAIL %s: code %d \"%s\", expected code %d with \"%s\"\n", what, tsr_error_code(*err), msg, code, text);
    ++g_failures;
  } else {
    printf("ok   %s -> %d: %s\n", what, code, msg);
  }
  tsr_error_free(*err);
  *err = NULL;
}

static tsr_value* value_of(const npy_array* a) {
  tsr_error* err = NULL;
  tsr_value* v = tsr_value_create_tensor(a->dtype, a->shape, a->rank, a->data, a->bytes, &err);
  if (!v) fprintf(stderr, "value: %s\n", tsr_error_message(err));
  tsr_error_free(err);
  return v;
}

static tsr_trainer* trainer_of(const tsr_model* m) {
  tsr_error* err = NULL;
  tsr_trainer* t = tsr_trainer_create(m, NULL, &err); /* defaults: one thread */
  if (!t) fprintf(stderr, "tsr_trainer_create: %s\n", tsr_error_message(err));
  tsr_error_free(err);
  return t;
}

/* n steps on (x, y); the losses in `losses` (may be NULL). 0 on success. */
static int steps(tsr_trainer* t, const tsr_value* x, const tsr_value* y, int n, float* losses) {
  for (int k = 0; k < n; ++k) {
    tsr_error* err = NULL;
    float loss = NAN;
    if (tsr_trainer_step(t, &x, 1, y, &loss, &err) != 0) {
      fprintf(stderr, "tsr_trainer_step: %s\n", tsr_error_message(err));
      tsr_error_free(err);
      return -1;
    }
    if (losses) losses[k] = loss;
  }
  return 0;
}

/* The exported inference model's bytes: equal bytes = bit-identical weights. */
typedef struct {
  uint8_t* data;
  size_t size;
} buffer;

static buffer exported(const tsr_trainer* t) {
  buffer b = {NULL, 0};
  tsr_error* err = NULL;
  if (tsr_trainer_export_inference_to_buffer(t, &b.data, &b.size, &err) != 0) {
    fprintf(stderr, "export_inference_to_buffer: %s\n", tsr_error_message(err));
    tsr_error_free(err);
  }
  return b;
}

static int same(buffer a, buffer b) { return a.data && b.data && a.size == b.size && memcmp(a.data, b.data, a.size) == 0; }

static tsr_model* load(const char* dir, const char* name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  tsr_error* err = NULL;
  tsr_model* m = tsr_model_load_file(path, &err);
  if (!m) fprintf(stderr, "%s: %s\n", path, tsr_error_message(err));
  tsr_error_free(err);
  return m;
}

static void test_null_handles(void) {
  tsr_error* err = NULL;
  float loss = 0;
  CHECK(tsr_trainer_create(NULL, NULL, &err) == NULL);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "training_model", "trainer_create(NULL)");
  CHECK(tsr_trainer_step(NULL, NULL, 0, NULL, &loss, &err) == TSR_ERR_INVALID_ARGUMENT);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "tsr_trainer_step: trainer", "step(NULL)");
  CHECK(tsr_trainer_eval(NULL, NULL, 0, NULL, &loss, NULL, &err) == TSR_ERR_INVALID_ARGUMENT);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "tsr_trainer_eval: trainer", "eval(NULL)");
  CHECK(tsr_trainer_set_learning_rate(NULL, 0.1f, &err) == TSR_ERR_INVALID_ARGUMENT);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "trainer", "set_learning_rate(NULL)");
  CHECK(tsr_trainer_save_checkpoint(NULL, "x.tsr", &err) == TSR_ERR_INVALID_ARGUMENT);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "trainer", "save_checkpoint(NULL)");
  uint8_t* data = (uint8_t*)1;
  size_t size = 1;
  CHECK(tsr_trainer_checkpoint_to_buffer(NULL, &data, &size, &err) == TSR_ERR_INVALID_ARGUMENT);
  CHECK(data == NULL && size == 0);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "trainer", "checkpoint_to_buffer(NULL)");
  CHECK(tsr_prepare_training(NULL, NULL, &err) == NULL);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "inference", "prepare_training(NULL)");
  CHECK(tsr_trainer_input_count(NULL) == 0);
  CHECK(tsr_trainer_input_name(NULL, 0) == NULL);
  CHECK(tsr_trainer_step_count(NULL) == 0);
  CHECK(tsr_trainer_learning_rate(NULL) == 0.0f);
  tsr_trainer_free(NULL);
  tsr_training_spec_free(NULL);
  tsr_buffer_free(NULL);
  tsr_training_spec_set_loss(NULL, "mse"); /* ignored */
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s DIR [--compare-cli]\n", argv[0]);
    return 1;
  }
  const char* dir = argv[1];
  const int compare_cli = argc > 2 && strcmp(argv[2], "--compare-cli") == 0;
  CHECK(tsr_c_api_version() >= 3);
  test_null_handles();

  char path[4096];
  snprintf(path, sizeof path, "%s/cli_checkpoint.tsr", dir);
  FILE* f = fopen(path, "rb");
  if (!f) {
    printf("SKIP: %s missing (prepare_train_model.py did not run)\n", path);
    return 77;
  }
  fclose(f);
  npy_array xa, ya;
  snprintf(path, sizeof path, "%s/x.npy", dir);
  if (npy_read(path, &xa) != 0) return 1;
  snprintf(path, sizeof path, "%s/y.npy", dir);
  if (npy_read(path, &ya) != 0) return 1;
  tsr_value* x = value_of(&xa);
  tsr_value* y = value_of(&ya);
  tsr_model* net = load(dir, "net.tsr");
  tsr_model* train = load(dir, "train.tsr");
  tsr_model* cli = load(dir, "cli_checkpoint.tsr");
  if (!x || !y || !net || !train || !cli) return 1;
  tsr_error* err = NULL;

  /* 1. Three C steps = the CLI's three steps, bit for bit. */
  tsr_trainer* a = trainer_of(train);
  if (!a) return 1;
  CHECK(tsr_trainer_input_count(a) == 1);
  CHECK(tsr_trainer_input_name(a, 0) && strcmp(tsr_trainer_input_name(a, 0), "image") == 0);
  CHECK(tsr_trainer_input_name(a, 1) == NULL);
  CHECK(fabsf(tsr_trainer_learning_rate(a) - 0.05f) < 1e-7f);
  float eval_loss = NAN, losses[3];
  tsr_value* pred = NULL;
  CHECK(tsr_trainer_eval(a, (const tsr_value* const*)&x, 1, y, &eval_loss, &pred, &err) == 0);
  CHECK(pred && tsr_value_rank(pred) == 2 && tsr_value_shape(pred)[1] == 4);
  CHECK(steps(a, x, y, 3, losses) == 0);
  CHECK(eval_loss == losses[0]); /* eval_step: train_step's loss before the update */
  CHECK(losses[2] < losses[0]);
  CHECK(tsr_trainer_step_count(a) == 3);
  printf("losses %.6f %.6f %.6f\n", losses[0], losses[1], losses[2]);
  const buffer after3 = exported(a);
  tsr_trainer* fresh = trainer_of(train);
  buffer untrained = exported(fresh);
  CHECK(after3.data && !same(after3, untrained)); /* the steps changed the weights */
  tsr_buffer_free(untrained.data);
  tsr_trainer_free(fresh);
  if (compare_cli) {
    tsr_trainer* c = trainer_of(train);
    CHECK(c != NULL);
    snprintf(path, sizeof path, "%s/cli_checkpoint.tsr", dir);
    CHECK(tsr_trainer_load_checkpoint(c, path, &err) == 0);
    CHECK(tsr_trainer_step_count(c) == 3);
    buffer from_cli = exported(c);
    CHECK(same(after3, from_cli));
    printf("ok   C API weights after 3 steps == tessera train's (%zu bytes exported)\n", after3.size);
    tsr_buffer_free(from_cli.data);
    tsr_trainer_free(c);
  }

  /* 2. tsr_prepare_training with the spec `tessera prepare-training` got: the same training. */
  tsr_training_spec* spec = tsr_training_spec_create();
  tsr_training_spec_set_optimizer(spec, "sgd");
  tsr_training_spec_set_learning_rate(spec, 0.05);
  tsr_training_spec_set_momentum(spec, 0.9, 0);
  tsr_training_spec_add_frozen(spec, "fc1.*");
  tsr_model* prepared = tsr_prepare_training(net, spec, &err);
  CHECK(prepared != NULL);
  if (prepared) {
    tsr_trainer* p = trainer_of(prepared);
    CHECK(p && steps(p, x, y, 3, NULL) == 0);
    buffer b = exported(p);
    CHECK(same(after3, b));
    tsr_buffer_free(b.data);
    tsr_trainer_free(p);
  }
  tsr_training_spec_add_frozen(spec, "decoder.*");
  CHECK(tsr_prepare_training(net, spec, &err) == NULL);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "frozen \"decoder.*\"", "prepare_training(unmatched pattern)");
  tsr_training_spec_free(spec);
  CHECK(tsr_prepare_training(net, spec, &err) == NULL); /* freed spec */
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "spec", "prepare_training(freed spec)");
  CHECK(tsr_prepare_training(train, NULL, &err) == NULL);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "variables", "prepare_training(training model)");

  /* 3. Checkpoint to bytes after one step, a new trainer from them, two more: the same. */
  tsr_trainer* r = trainer_of(train);
  CHECK(steps(r, x, y, 1, NULL) == 0);
  uint8_t* ckpt = NULL;
  size_t ckpt_size = 0;
  CHECK(tsr_trainer_checkpoint_to_buffer(r, &ckpt, &ckpt_size, &err) == 0);
  tsr_trainer_free(r);
  tsr_model* ckpt_model = tsr_model_load_memory(ckpt, ckpt_size, &err);
  CHECK(ckpt_model != NULL);
  tsr_trainer* resumed = trainer_of(ckpt_model);
  CHECK(resumed && tsr_trainer_step_count(resumed) == 1);
  CHECK(steps(resumed, x, y, 2, NULL) == 0);
  buffer b = exported(resumed);
  CHECK(same(after3, b));
  tsr_buffer_free(b.data);
  /* ... and loaded into a fresh trainer from memory. */
  tsr_trainer* loaded = trainer_of(train);
  CHECK(tsr_trainer_load_checkpoint_memory(loaded, ckpt, ckpt_size, &err) == 0);
  CHECK(steps(loaded, x, y, 2, NULL) == 0);
  b = exported(loaded);
  CHECK(same(after3, b));
  tsr_buffer_free(b.data);

  /* 4. Learning rate 0: the weights stay; bad rates are refused and change nothing. */
  buffer before = exported(loaded);
  CHECK(tsr_trainer_set_learning_rate(loaded, 0.0f, &err) == 0);
  CHECK(steps(loaded, x, y, 1, NULL) == 0);
  b = exported(loaded);
  CHECK(same(before, b));
  tsr_buffer_free(b.data);
  tsr_buffer_free(before.data);
  CHECK(tsr_trainer_set_learning_rate(loaded, -1.0f, &err) == TSR_ERR_INVALID_ARGUMENT);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "learning rate", "set_learning_rate(-1)");
  CHECK(tsr_trainer_set_learning_rate(loaded, NAN, &err) == TSR_ERR_INVALID_ARGUMENT);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "learning rate", "set_learning_rate(NaN)");
  CHECK(tsr_trainer_learning_rate(loaded) == 0.0f);

  /* 5. Step/eval errors: named, nothing updated. */
  const int64_t count = tsr_trainer_step_count(loaded);
  const float wrong_labels[1] = {2.0f};
  const int64_t one = 1;
  tsr_value* yf = tsr_value_create_tensor(TSR_F32, &one, 1, wrong_labels, sizeof wrong_labels, &err);
  float loss = 0;
  CHECK(tsr_trainer_step(loaded, (const tsr_value* const*)&x, 1, yf, &loss, &err) == TSR_ERR_INVALID_ARGUMENT);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "f32", "step(f32 labels)");
  CHECK(tsr_trainer_step(loaded, (const tsr_value* const*)&x, 0, y, &loss, &err) == TSR_ERR_INVALID_ARGUMENT);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "0 inputs given", "step(0 inputs)");
  CHECK(tsr_trainer_step(loaded, NULL, 1, y, &loss, &err) == TSR_ERR_INVALID_ARGUMENT);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "inputs is NULL", "step(inputs NULL)");
  CHECK(tsr_trainer_step(loaded, (const tsr_value* const*)&x, 1, NULL, &loss, &err) == TSR_ERR_INVALID_ARGUMENT);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "labels", "step(labels NULL)");
  tsr_value_free(yf);
  CHECK(tsr_trainer_eval(loaded, (const tsr_value* const*)&x, 1, yf, &loss, NULL, &err) == TSR_ERR_INVALID_ARGUMENT);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "not a live handle", "eval(freed labels)");
  CHECK(tsr_trainer_step_count(loaded) == count);

  /* 6. Checkpoint mismatches: the inference model (no variables), a missing file; nothing lost. */
  before = exported(loaded);
  uint8_t* inf = NULL;
  size_t inf_size = 0;
  CHECK(tsr_trainer_export_inference_to_buffer(loaded, &inf, &inf_size, &err) == 0);
  CHECK(tsr_trainer_load_checkpoint_memory(loaded, inf, inf_size, &err) == TSR_ERR_INVALID_ARGUMENT);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "does not match", "load_checkpoint(inference model)");
  CHECK(tsr_trainer_load_checkpoint(loaded, "/nonexistent/ckpt.tsr", &err) == TSR_ERR_NOT_FOUND);
  expect_error(&err, TSR_ERR_NOT_FOUND, "nonexistent", "load_checkpoint(missing file)");
  CHECK(tsr_trainer_load_checkpoint_memory(loaded, NULL, 4, &err) == TSR_ERR_INVALID_ARGUMENT);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "data is NULL", "load_checkpoint_memory(NULL)");
  b = exported(loaded);
  CHECK(same(before, b));
  tsr_buffer_free(b.data);
  tsr_buffer_free(before.data);
  CHECK(tsr_trainer_create(net, NULL, &err) == NULL);
  expect_error(&err, TSR_ERR_NOT_FOUND, "train_step", "trainer_create(inference model)");

  /* 7. The exported model (file and bytes) runs and equals eval's prediction. */
  snprintf(path, sizeof path, "%s/c_tuned.tsr", dir);
  CHECK(tsr_trainer_export_inference(a, path, &err) == 0);
  tsr_model* tuned = tsr_model_load_file(path, &err);
  tsr_session* s = tuned ? tsr_session_create(tuned, NULL, &err) : NULL;
  tsr_value* out = NULL;
  tsr_value* want = NULL;
  CHECK(s && tsr_session_run(s, (const tsr_value* const*)&x, 1, &out, 1, &err) == 0);
  CHECK(tsr_trainer_eval(a, (const tsr_value* const*)&x, 1, y, &loss, &want, &err) == 0);
  CHECK(out && want && tsr_value_size(out) == tsr_value_size(want) &&
        memcmp(tsr_value_data(out), tsr_value_data(want), tsr_value_size(want)) == 0);
  CHECK(tsr_trainer_export_inference(a, NULL, &err) == TSR_ERR_INVALID_ARGUMENT);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "path is NULL", "export_inference(NULL path)");

  if (err) fprintf(stderr, "unexpected error: %s\n", tsr_error_message(err));
  tsr_error_free(err);
  tsr_value_free(out);
  tsr_value_free(want);
  tsr_session_free(s);
  tsr_model_free(tuned);
  tsr_buffer_free(inf);
  tsr_trainer_free(loaded);
  tsr_trainer_free(resumed);
  tsr_model_free(ckpt_model);
  tsr_buffer_free(ckpt);
  tsr_model_free(prepared);
  tsr_buffer_free(after3.data);
  tsr_value_free(pred);
  tsr_trainer_free(a);
  tsr_model_free(cli);
  tsr_model_free(train);
  tsr_model_free(net);
  tsr_value_free(x);
  tsr_value_free(y);
  npy_free(&xa);
  npy_free(&ya);
  printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures ? 1 : 0;
}
