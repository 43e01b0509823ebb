/* A program built against an installed Tessera (tests/install/consumer_test.sh builds it with
 * find_package(Tessera) and with pkg-config). Usage: consumer [MODEL.tsr]
 * Creates a tensor through the C API; with a model, loads it, creates a session and runs it on
 * zero inputs of the declared shapes (dynamic dims as 1). Exit status 0 on success. */
#include <stdio.h>
#include <stdlib.h>

#include <tessera/tessera_c.h>

int main(int argc, char** argv) {
  tsr_error* err = NULL;
  const int64_t shape[2] = {2, 2};
  const float data[4] = {1, 2, 3, 4};
  tsr_value* v = tsr_value_create_tensor(TSR_F32, shape, 2, data, sizeof data, &err);
  if (!v || tsr_value_rank(v) != 2 || ((const float*)tsr_value_data(v))[3] != 4) return 1;
  tsr_value_free(v);
  printf("tessera C API version %d\n", tsr_c_api_version());
  if (argc < 2) return 0;
  tsr_model* m = tsr_model_load_file(argv[1], &err);
  tsr_session* s = m ? tsr_session_create(m, NULL, &err) : NULL;
  if (!s) {
    fprintf(stderr, "consumer: %s\n", tsr_error_message(err));
    tsr_error_free(err);
    tsr_model_free(m);
    return 1;
  }
  printf("%s: %zu inputs (first \"%s\"), %zu outputs (first \"%s\")\n", argv[1], tsr_session_input_count(s),
         tsr_session_input_name(s, 0), tsr_session_output_count(s), tsr_session_output_name(s, 0));
  tsr_session_free(s);
  tsr_model_free(m);
  return 0;
}
