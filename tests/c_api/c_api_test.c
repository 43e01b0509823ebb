/* Tests of the C API (core/include/tessera/tessera_c.h), written in C11 and compiled as C.
 *
 *   tessera_c_api_test [MODEL_DIR...]
 *   tessera_c_api_test --expect-unsupported MODEL.tsr TEXT...
 *   tessera_c_api_test --expect-supported MODEL.tsr
 *   tessera_c_api_test --time RUNS THREADS MODEL_DIR
 *
 * Always runs every function's argument and error paths that need no model. For each MODEL_DIR
 * (written by tests/c_api/prepare_model.py: model.tsr, manifest.txt, ref/ holding
 * onnxruntime-node's outputs) it also runs the session error paths on that model and compares
 * its outputs, loaded from a file and from memory, with onnxruntime's at rtol = atol = 1e-4.
 * --expect-unsupported checks that loading MODEL.tsr and creating a session fails with
 * TSR_ERR_UNSUPPORTED and a message naming the node ("node[") and containing each TEXT: what a
 * minimal runtime (the same program built by mobile/selective/) says about a model that needs an
 * op or dtype its op list left out. --expect-supported checks that both succeed (the full runtime
 * on the same model, so that the error above is the selection's, not the model's).
 * --time runs MODEL_DIR's inputs RUNS times on a session of THREADS threads, after 3 untimed runs,
 * and prints the median and fastest run in milliseconds (wall clock around tsr_session_run,
 * inputs made once): the latency bench of the minimal runtimes (bench/minimal.sh).
 * Exit status: 0 pass, 1 fail, 77 when a MODEL_DIR has no manifest or MODEL.tsr is absent (model
 * not prepared); --time: 0, or 1 on any error, an unprepared MODEL_DIR included.
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "npy.h"
#include "tessera/tessera_c.h"

/* Checks that `err` holds `code` with a message, prints it and frees it. */
static void expect_error(tsr_error** err, int code, const char* what) {
  ++g_checks;
  if (!*err) {
    fprintf(stderr, "FAIL %s: no error reported (expected code %d)\n", what, code);
    ++g_failures;
    return;
  }
  const char* msg = tsr_error_message(*err);
  if (tsr_error_code(*err) != code || !msg || !*msg) {
    fprintf(stderr, "FAIL %s: code %d \"%s\", expected code %d\n", what, tsr_error_code(*err), msg, code);
    ++g_failures;
  } else {
    printf("ok   %s -> %d: %s\n", what, code, msg);
  }
  tsr_error_free(*err);
  *err = NULL;
}

static void test_errors_and_values(void) {
  tsr_error* err = NULL;
  CHECK(tsr_c_api_version() == TSR_C_API_VERSION);
  CHECK(tsr_error_code(NULL) == TSR_ERR_INVALID_ARGUMENT);
  CHECK(strcmp(tsr_error_message(NULL), "") == 0);
  tsr_error_free(NULL);

  /* Loading. */
  CHECK(tsr_model_load_file(NULL, &err) == NULL);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "load_file(NULL)");
  CHECK(tsr_model_load_file(NULL, NULL) == NULL); /* err may be NULL */
  CHECK(tsr_model_load_file("/nonexistent/model.tsr", &err) == NULL);
  expect_error(&err, TSR_ERR_NOT_FOUND, "load_file(missing)");
  static const char junk[] = "this is not a tessera model, just 64 bytes of text padding it out.";
  CHECK(tsr_model_load_memory(NULL, 16, &err) == NULL);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "load_memory(NULL)");
  CHECK(tsr_model_load_memory(junk, 0, &err) == NULL);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "load_memory(size 0)");
  CHECK(tsr_model_load_memory(junk, sizeof junk, &err) == NULL);
  expect_error(&err, TSR_ERR_INVALID_MODEL, "load_memory(junk)");
  tsr_model_free(NULL);

  /* Options: NULL is ignored by setters and free. */
  tsr_session_options_set_threads(NULL, 2);
  tsr_session_options_set_device(NULL, "cpu");
  tsr_session_options_set_max_memory(NULL, 1);
  tsr_session_options_set_optimization(NULL, TSR_OPTIMIZE_NONE);
  tsr_session_options_set_fast_math(NULL, TSR_FAST_MATH_BF16);
  tsr_session_options_free(NULL);
  CHECK(tsr_fast_math_supported(TSR_FAST_MATH_NONE) == 1);
  CHECK(tsr_fast_math_supported(7) == 0);

  /* Values. */
  const int64_t shape23[2] = {2, 3};
  const float six[6] = {1, 2, 3, 4, 5, 6};
  tsr_value* v = tsr_value_create_tensor(TSR_F32, shape23, 2, six, sizeof six, &err);
  CHECK(v != NULL && err == NULL);
  CHECK(tsr_value_dtype(v) == TSR_F32);
  CHECK(tsr_value_rank(v) == 2);
  CHECK(tsr_value_shape(v) && tsr_value_shape(v)[0] == 2 && tsr_value_shape(v)[1] == 3);
  CHECK(tsr_value_size(v) == sizeof six);
  CHECK(tsr_value_data(v) && memcmp(tsr_value_data(v), six, sizeof six) == 0);
  CHECK(tsr_value_data(v) != (const void*)six); /* copied */
  CHECK(((uintptr_t)tsr_value_data(v) & 63) == 0);
  tsr_value_free(v);
  /* A freed value is detected: getters return 0/NULL, a second free is ignored. */
  CHECK(tsr_value_dtype(v) == 0 && tsr_value_rank(v) == 0 && tsr_value_shape(v) == NULL && tsr_value_data(v) == NULL);
  tsr_value_free(v);
  CHECK(tsr_value_dtype(NULL) == 0 && tsr_value_rank(NULL) == 0 && tsr_value_shape(NULL) == NULL &&
        tsr_value_data(NULL) == NULL && tsr_value_size(NULL) == 0);
  tsr_value_free(NULL);

  const int64_t scalar_i64 = 16000;
  v = tsr_value_create_tensor(TSR_I64, NULL, 0, &scalar_i64, sizeof scalar_i64, &err);
  CHECK(v && tsr_value_rank(v) == 0 && tsr_value_shape(v) == NULL && *(const int64_t*)tsr_value_data(v) == 16000);
  tsr_value_free(v);
  const int64_t empty_shape[2] = {0, 4};
  v = tsr_value_create_tensor(TSR_U8, empty_shape, 2, NULL, 0, &err);
  CHECK(v && tsr_value_rank(v) == 2 && tsr_value_data(v) == NULL && tsr_value_size(v) == 0);
  tsr_value_free(v);
  const uint8_t flags[3] = {1, 0, 1};
  const int64_t shape3[1] = {3};
  v = tsr_value_create_tensor(TSR_BOOL, shape3, 1, flags, 3, &err);
  CHECK(v && tsr_value_dtype(v) == TSR_BOOL);
  tsr_value_free(v);

  CHECK(tsr_value_create_tensor((tsr_dtype)99, shape23, 2, six, sizeof six, &err) == NULL);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "create_tensor(dtype 99)");
  CHECK(tsr_value_create_tensor((tsr_dtype)8, shape23, 2, six, sizeof six, &err) == NULL); /* ONNX string */
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "create_tensor(string dtype)");
  CHECK(tsr_value_create_tensor(TSR_F32, shape23, 2, six, sizeof six - 4, &err) == NULL);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "create_tensor(bytes too few)");
  CHECK(tsr_value_create_tensor(TSR_F64, shape23, 2, six, sizeof six, &err) == NULL);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "create_tensor(dtype/bytes mismatch)");
  const int64_t negative[2] = {2, -3};
  CHECK(tsr_value_create_tensor(TSR_F32, negative, 2, six, sizeof six, &err) == NULL);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "create_tensor(negative dim)");
  CHECK(tsr_value_create_tensor(TSR_F32, NULL, 2, six, sizeof six, &err) == NULL);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "create_tensor(shape NULL, rank 2)");
  CHECK(tsr_value_create_tensor(TSR_F32, shape23, 2, NULL, sizeof six, &err) == NULL);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "create_tensor(data NULL)");
  const int64_t huge[3] = {1 << 30, 1 << 30, 1 << 30};
  CHECK(tsr_value_create_tensor(TSR_F32, huge, 3, six, sizeof six, &err) == NULL);
  expect_error(&err, TSR_ERR_RESOURCE, "create_tensor(2^90 elements)");
  CHECK(tsr_value_create_tensor((tsr_dtype)99, shape23, 2, six, sizeof six, NULL) == NULL);

  /* Sessions without a (live) model. */
  CHECK(tsr_session_create(NULL, NULL, &err) == NULL);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "session_create(NULL model)");
  CHECK(tsr_session_input_count(NULL) == 0 && tsr_session_output_count(NULL) == 0);
  CHECK(tsr_session_input_name(NULL, 0) == NULL && tsr_session_output_name(NULL, 0) == NULL);
  CHECK(tsr_session_run(NULL, NULL, 0, NULL, 0, &err) == TSR_ERR_INVALID_ARGUMENT);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "session_run(NULL session)");
  tsr_session_free(NULL);
}

/* ---- Model tests ---------------------------------------------------------------------------- */

#define MAX_TENSORS 16

typedef struct {
  char dir[1024];
  size_t n_in, n_out;
  char in_names[MAX_TENSORS][256];
  npy_array in[MAX_TENSORS], ref[MAX_TENSORS];
} model_case;

/* 0 ok, 77 no manifest, -1 error. */
static int load_case(const char* dir, model_case* c) {
  memset(c, 0, sizeof *c);
  snprintf(c->dir, sizeof c->dir, "%s", dir);
  char path[1400], kind[16], name[256], file[256];
  snprintf(path, sizeof path, "%s/manifest.txt", dir);
  FILE* f = fopen(path, "r");
  if (!f) return 77;
  int rc = 0;
  while (rc == 0 && fscanf(f, "%15s %255s %255s", kind, name, file) == 3) {
    snprintf(path, sizeof path, "%s/ref/%s", dir, file);
    if (strcmp(kind, "input") == 0 && c->n_in < MAX_TENSORS) {
      snprintf(c->in_names[c->n_in], sizeof c->in_names[0], "%s", name);
      rc = npy_read(path, &c->in[c->n_in++]);
    } else if (strcmp(kind, "output") == 0 && c->n_out < MAX_TENSORS) {
      rc = npy_read(path, &c->ref[c->n_out++]);
    } else {
      rc = -1;
    }
  }
  fclose(f);
  return rc;
}

static void free_case(model_case* c) {
  for (size_t i = 0; i < c->n_in; ++i) npy_free(&c->in[i]);
  for (size_t i = 0; i < c->n_out; ++i) npy_free(&c->ref[i]);
}

static double as_double(const void* p, tsr_dtype d, size_t i) {
  switch (d) {
    case TSR_F32: return ((const float*)p)[i];
    case TSR_F64: return ((const double*)p)[i];
    case TSR_I32: return ((const int32_t*)p)[i];
    case TSR_I64: return (double)((const int64_t*)p)[i];
    case TSR_U8: case TSR_BOOL: return ((const uint8_t*)p)[i];
    case TSR_I8: return ((const int8_t*)p)[i];
    default: return NAN;
  }
}

/* Outputs against onnxruntime's: same dtype and shape, |a - b| <= atol + rtol * |b|. */
static void compare_outputs(const model_case* c, tsr_value* const* outs, const char* how) {
  const double rtol = 1e-4, atol = 1e-4;
  double max_abs = 0;
  for (size_t i = 0; i < c->n_out; ++i) {
    const npy_array* r = &c->ref[i];
    CHECK(tsr_value_dtype(outs[i]) == r->dtype);
    CHECK(tsr_value_rank(outs[i]) == r->rank);
    if (tsr_value_dtype(outs[i]) != r->dtype || tsr_value_rank(outs[i]) != r->rank) continue;
    CHECK(r->rank == 0 || memcmp(tsr_value_shape(outs[i]), r->shape, r->rank * sizeof(int64_t)) == 0);
    CHECK(tsr_value_size(outs[i]) == r->bytes);
    if (tsr_value_size(outs[i]) != r->bytes) continue;
    size_t n = r->bytes / npy_elem_size(r->dtype), bad = 0;
    for (size_t k = 0; k < n; ++k) {
      double a = as_double(tsr_value_data(outs[i]), r->dtype, k), b = as_double(r->data, r->dtype, k);
      double d = fabs(a - b);
      if (d > max_abs) max_abs = d;
      if (!(d <= atol + rtol * fabs(b))) {
        if (bad++ == 0) fprintf(stderr, "%s output[%zu] element %zu: %.9g vs onnxruntime %.9g\n", how, i, k, a, b);
      }
    }
    CHECK(bad == 0);
  }
  printf("model %s (%s): max abs err %.3g over %zu outputs vs onnxruntime\n", c->dir, how, max_abs, c->n_out);
}

/* Builds the inputs in session order (matched by name); NULL entries on failure. */
static int make_inputs(const model_case* c, const tsr_session* s, tsr_value** in) {
  size_t n = tsr_session_input_count(s);
  for (size_t i = 0; i < n; ++i) {
    in[i] = NULL;
    for (size_t k = 0; k < c->n_in; ++k)
      if (strcmp(c->in_names[k], tsr_session_input_name(s, i)) == 0)
        in[i] = tsr_value_create_tensor(c->in[k].dtype, c->in[k].shape, c->in[k].rank, c->in[k].data,
                                        c->in[k].bytes, NULL);
    if (!in[i]) {
      fprintf(stderr, "no reference input for \"%s\"\n", tsr_session_input_name(s, i));
      return -1;
    }
  }
  return 0;
}

static void free_values(tsr_value** v, size_t n) {
  for (size_t i = 0; i < n; ++i) tsr_value_free(v[i]);
}

/* Runs once and compares; the outputs are freed. */
static void run_and_compare(const model_case* c, tsr_session* s, const char* how) {
  tsr_error* err = NULL;
  tsr_value* in[MAX_TENSORS] = {0};
  tsr_value* out[MAX_TENSORS] = {0};
  size_t n_in = tsr_session_input_count(s), n_out = tsr_session_output_count(s);
  CHECK(make_inputs(c, s, in) == 0);
  int rc = tsr_session_run(s, (const tsr_value* const*)in, n_in, out, n_out, &err);
  if (rc != 0) fprintf(stderr, "%s: run failed (%d): %s\n", how, rc, tsr_error_message(err));
  CHECK(rc == 0 && err == NULL);
  tsr_error_free(err);
  if (rc == 0) compare_outputs(c, out, how);
  free_values(in, n_in);
  free_values(out, n_out);
}

static void test_run_errors(const model_case* c, tsr_session* s, const tsr_model* model) {
  tsr_error* err = NULL;
  tsr_value* in[MAX_TENSORS] = {0};
  tsr_value* out[MAX_TENSORS];
  size_t n_in = tsr_session_input_count(s), n_out = tsr_session_output_count(s);
  CHECK(tsr_session_input_name(s, n_in) == NULL && tsr_session_output_name(s, n_out) == NULL);
  CHECK(make_inputs(c, s, in) == 0);
  const tsr_value* const* cin = (const tsr_value* const*)in;

  for (size_t i = 0; i < n_out; ++i) out[i] = (tsr_value*)&err; /* garbage the error path must clear */
  CHECK(tsr_session_run(s, cin, n_in - 1, out, n_out, &err) == TSR_ERR_INVALID_ARGUMENT);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "run(one input too few)");
  CHECK(out[0] == NULL);
  CHECK(tsr_session_run(s, cin, n_in, out, n_out + 1, &err) == TSR_ERR_INVALID_ARGUMENT);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "run(one output slot too many)");
  CHECK(tsr_session_run(s, NULL, n_in, out, n_out, &err) == TSR_ERR_INVALID_ARGUMENT);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "run(inputs NULL)");
  CHECK(tsr_session_run(s, cin, n_in, NULL, n_out, &err) == TSR_ERR_INVALID_ARGUMENT);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "run(outputs NULL)");
  CHECK(tsr_session_run(s, cin, n_in + 1, out, n_out, NULL) == TSR_ERR_INVALID_ARGUMENT); /* err may be NULL */

  /* Input 0 NULL, freed, with another dtype, and with an extra dim. */
  tsr_value* keep = in[0];
  in[0] = NULL;
  CHECK(tsr_session_run(s, cin, n_in, out, n_out, &err) == TSR_ERR_INVALID_ARGUMENT);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "run(input[0] NULL)");
  tsr_value* freed = tsr_value_create_tensor(TSR_F32, NULL, 0, "\0\0\0\0", 4, NULL);
  tsr_value_free(freed);
  in[0] = freed;
  CHECK(tsr_session_run(s, cin, n_in, out, n_out, &err) == TSR_ERR_INVALID_ARGUMENT);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "run(input[0] freed)");
  tsr_dtype d0 = tsr_value_dtype(keep), other = d0 == TSR_I32 ? TSR_F32 : TSR_I32;
  size_t n0 = tsr_value_size(keep) / npy_elem_size(d0);
  void* zeros = calloc(n0 ? n0 : 1, 4);
  in[0] = tsr_value_create_tensor(other, tsr_value_shape(keep), tsr_value_rank(keep), zeros, n0 * 4, &err);
  CHECK(in[0] != NULL);
  CHECK(tsr_session_run(s, cin, n_in, out, n_out, &err) == TSR_ERR_INVALID_ARGUMENT);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "run(input[0] wrong dtype)");
  tsr_value_free(in[0]);
  int64_t shape[9] = {1};
  size_t rank0 = tsr_value_rank(keep);
  if (rank0) memcpy(shape + 1, tsr_value_shape(keep), rank0 * sizeof(int64_t));
  in[0] = tsr_value_create_tensor(d0, shape, rank0 + 1, tsr_value_data(keep), tsr_value_size(keep), &err);
  CHECK(in[0] != NULL);
  CHECK(tsr_session_run(s, cin, n_in, out, n_out, &err) == TSR_ERR_INVALID_ARGUMENT);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "run(input[0] one more dim)");
  tsr_value_free(in[0]);
  free(zeros);
  in[0] = keep;
  free_values(in, n_in);

  /* Options: an unknown device; freed options and models. */
  tsr_session_options* o = tsr_session_options_create();
  CHECK(o != NULL);
  tsr_session_options_set_device(o, "no-such-device");
  CHECK(tsr_session_create(model, o, &err) == NULL);
  expect_error(&err, TSR_ERR_NOT_FOUND, "session_create(device \"no-such-device\")");
  tsr_session_options_free(o);
  CHECK(tsr_session_create(model, o, &err) == NULL);
  expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "session_create(freed options)");
  tsr_session_options_set_threads(o, 3); /* ignored: freed */
  tsr_session_options_free(o);          /* double free ignored */
}

static char* read_file_aligned(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* buf = n > 0 ? aligned_alloc(64, ((size_t)n + 63) / 64 * 64) : NULL;
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return buf;
}

static int test_model(const char* dir) {
  model_case* c = malloc(sizeof *c);
  int rc = load_case(dir, c);
  if (rc != 0) {
    if (rc == 77) printf("SKIP: %s/manifest.txt is absent (tests/c_api/prepare_model.py writes it)\n", dir);
    else fprintf(stderr, "FAIL: cannot read the references in %s\n", dir), ++g_failures;
    free_case(c);
    free(c);
    return rc;
  }
  char path[1100];
  snprintf(path, sizeof path, "%s/model.tsr", dir);
  tsr_error* err = NULL;

  /* From a file, default options; the model is freed before the session's last use. */
  tsr_model* m = tsr_model_load_file(path, &err);
  if (!m) fprintf(stderr, "load %s: %s\n", path, tsr_error_message(err));
  CHECK(m != NULL && err == NULL);
  tsr_session* s = m ? tsr_session_create(m, NULL, &err) : NULL;
  if (m && !s) fprintf(stderr, "session %s: %s\n", path, tsr_error_message(err));
  CHECK(s != NULL);
  if (s) {
    CHECK(tsr_session_input_count(s) == c->n_in);
    CHECK(tsr_session_output_count(s) == c->n_out);
    test_run_errors(c, s, m);
    tsr_model_free(m);
    CHECK(tsr_session_create(m, NULL, &err) == NULL);
    expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "session_create(freed model)");
    run_and_compare(c, s, "file, model freed");
    tsr_session_free(s);
    CHECK(tsr_session_input_count(s) == 0); /* freed session detected */
    CHECK(tsr_session_run(s, NULL, 0, NULL, 0, &err) == TSR_ERR_INVALID_ARGUMENT);
    expect_error(&err, TSR_ERR_INVALID_ARGUMENT, "session_run(freed session)");
    tsr_session_free(s);
  } else {
    tsr_model_free(m);
  }
  tsr_error_free(err);
  err = NULL;

  /* From memory, 2 threads, device "auto", a memory cap well above what the model needs. */
  size_t size = 0;
  char* bytes = read_file_aligned(path, &size);
  CHECK(bytes != NULL);
  if (bytes) {
    CHECK(tsr_model_load_memory(bytes, size / 2, &err) == NULL);
    expect_error(&err, TSR_ERR_INVALID_MODEL, "load_memory(first half of model.tsr)");
    m = tsr_model_load_memory(bytes, size, &err);
    CHECK(m != NULL);
    tsr_session_options* o = tsr_session_options_create();
    tsr_session_options_set_threads(o, 2);
    tsr_session_options_set_device(o, "auto"); /* a GPU backend that starts, else the CPU */
    tsr_session_options_set_max_memory(o, (uint64_t)1 << 32);
    s = m ? tsr_session_create(m, o, &err) : NULL;
    tsr_session_options_free(o); /* options are copied */
    CHECK(s != NULL);
    if (s) run_and_compare(c, s, "memory, 2 threads");
    tsr_session_free(s);
    /* The graph as loaded, without the inference optimizations (the default is all). */
    o = tsr_session_options_create();
    tsr_session_options_set_optimization(o, TSR_OPTIMIZE_NONE);
    tsr_session_options_set_optimization(o, 7); /* ignored: not a level */
    s = m ? tsr_session_create(m, o, &err) : NULL;
    tsr_session_options_free(o);
    CHECK(s != NULL);
    if (s) run_and_compare(c, s, "memory, not optimized");
    tsr_session_free(s);
    /* bf16 fast math: only attention changes; the test models have none, so outputs are equal. */
    o = tsr_session_options_create();
    tsr_session_options_set_fast_math(o, TSR_FAST_MATH_BF16);
    s = m ? tsr_session_create(m, o, &err) : NULL;
    tsr_session_options_free(o);
    CHECK(s != NULL);
    if (s) run_and_compare(c, s, "memory, fast math bf16");
    tsr_session_free(s);
    tsr_model_free(m);
    tsr_error_free(err);
    free(bytes);
  }
  free_case(c);
  free(c);
  return 0;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* --time: see the top of the file. 0 ok, 1 error. */
static int time_model(const char* dir, int runs, int threads) {
  model_case* c = malloc(sizeof *c);
  int rc = load_case(dir, c);
  char path[1100];
  snprintf(path, sizeof path, "%s/model.tsr", dir);
  tsr_error* err = NULL;
  tsr_model* m = rc == 0 ? tsr_model_load_file(path, &err) : NULL;
  tsr_session_options* o = tsr_session_options_create();
  tsr_session_options_set_threads(o, threads);
  tsr_session* s = m ? tsr_session_create(m, o, &err) : NULL;
  tsr_session_options_free(o);
  tsr_value* in[MAX_TENSORS] = {0};
  tsr_value* out[MAX_TENSORS] = {0};
  size_t n_in = s ? tsr_session_input_count(s) : 0, n_out = s ? tsr_session_output_count(s) : 0;
  double* ms = malloc(sizeof(double) * (size_t)runs);
  if (rc != 0) {  /* timing has nothing to skip to: an unprepared model is an error */
    fprintf(stderr, "cannot read %s/manifest.txt or its inputs (tests/c_api/prepare_model.py writes them)\n", dir);
    rc = 1;
  } else if (!s) fprintf(stderr, "%s: %s\n", path, tsr_error_message(err)), rc = 1;
  else if (make_inputs(c, s, in) != 0) rc = 1;
  for (int r = -3; rc == 0 && r < runs; ++r) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (tsr_session_run(s, (const tsr_value* const*)in, n_in, out, n_out, &err) != 0) {
      fprintf(stderr, "%s: run failed: %s\n", path, tsr_error_message(err));
      rc = 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    free_values(out, rc == 0 ? n_out : 0);
    if (r >= 0) ms[r] = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6;
  }
  if (rc == 0) {
    qsort(ms, (size_t)runs, sizeof *ms, cmp_double);
    printf("time %s threads %d: median %.4f ms, fastest %.4f ms over %d runs\n", dir, threads, ms[runs / 2], ms[0],
           runs);
  }
  free(ms);
  free_values(in, n_in);
  tsr_session_free(s);
  tsr_model_free(m);
  tsr_error_free(err);
  free_case(c);
  free(c);
  return rc;
}

/* Loads `path` and creates a session; returns the first error (NULL: both succeeded). */
static tsr_error* open_model(const char* path) {
  tsr_error* err = NULL;
  tsr_model* m = tsr_model_load_file(path, &err);
  tsr_session* s = m ? tsr_session_create(m, NULL, &err) : NULL;
  tsr_session_free(s);
  tsr_model_free(m);
  return err;
}

static int expect_unsupported(const char* path, char** needles, int n) {
  tsr_error* err = open_model(path);
  const char* msg = err ? tsr_error_message(err) : "";
  int ok = err && tsr_error_code(err) == TSR_ERR_UNSUPPORTED && strstr(msg, "node[") != NULL;
  for (int i = 0; i < n; ++i) ok = ok && strstr(msg, needles[i]) != NULL;
  if (ok) printf("ok   %s -> %d: %s\n", path, TSR_ERR_UNSUPPORTED, msg);
  else fprintf(stderr, "FAIL %s: code %d \"%s\", expected code %d naming the node\n", path, tsr_error_code(err), msg,
               TSR_ERR_UNSUPPORTED);
  tsr_error_free(err);
  return ok ? 0 : 1;
}

static int expect_supported(const char* path) {
  tsr_error* err = open_model(path);
  if (err) fprintf(stderr, "FAIL %s: %d %s\n", path, tsr_error_code(err), tsr_error_message(err));
  else printf("ok   %s loads and gets a session\n", path);
  tsr_error_free(err);
  return err ? 1 : 0;
}

/* 77 (skip) when the model was not written (make_unselected.py skips without a host CLI). */
static int exists_or_skip(const char* path) {
  FILE* f = fopen(path, "rb");
  if (f) fclose(f);
  else printf("SKIP: %s is absent (tests/c_api/make_unselected.py writes it)\n", path);
  return f ? 0 : 77;
}

int main(int argc, char** argv) {
  if (argc >= 3 && strcmp(argv[1], "--expect-unsupported") == 0)
    return exists_or_skip(argv[2]) ? 77 : expect_unsupported(argv[2], argv + 3, argc - 3);
  if (argc == 5 && strcmp(argv[1], "--time") == 0 && atoi(argv[2]) > 0 && atoi(argv[3]) > 0)
    return time_model(argv[4], atoi(argv[2]), atoi(argv[3]));
  if (argc == 3 && strcmp(argv[1], "--expect-supported") == 0)
    return exists_or_skip(argv[2]) ? 77 : expect_supported(argv[2]);
  test_errors_and_values();
  int skipped = 0;
  for (int i = 1; i < argc; ++i) skipped |= test_model(argv[i]) == 77;
  printf("%d checks, %d failed\n", g_checks, g_failures);
  if (g_failures) return 1;
  return skipped ? 77 : 0;
}
