/* Minimal .npy reader for the C API tests (little-endian, C order, version 1/2 headers, the
 * dtypes gen_refs.js writes). C11. */
#ifndef TSR_TESTS_C_API_NPY_H_
#define TSR_TESTS_C_API_NPY_H_

#include <stddef.h>
#include <stdint.h>

#include "tessera/tessera_c.h"

typedef struct {
  tsr_dtype dtype;
  size_t rank;
  int64_t shape[8];
  void* data; /* malloc'ed, `bytes` long */
  size_t bytes;
} npy_array;

/* 0 on success; on failure prints why to stderr and returns -1. */
int npy_read(const char* path, npy_array* out);
void npy_free(npy_array* a);
size_t npy_elem_size(tsr_dtype d);

#endif /* TSR_TESTS_C_API_NPY_H_ */
