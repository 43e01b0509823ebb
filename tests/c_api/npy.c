#include "npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t npy_elem_size(tsr_dtype d) {
  switch (d) {
    case TSR_F32: case TSR_I32: return 4;
    case TSR_U8: case TSR_I8: case TSR_BOOL: return 1;
    case TSR_I64: case TSR_F64: return 8;
    case TSR_F16: return 2;
  }
  return 0;
}

static int parse_descr(const char* d, tsr_dtype* out) {
  static const struct { const char* descr; tsr_dtype dtype; } kTable[] = {
      {"<f4", TSR_F32}, {"<f8", TSR_F64}, {"<f2", TSR_F16}, {"<i4", TSR_I32}, {"<i8", TSR_I64},
      {"|u1", TSR_U8},  {"|i1", TSR_I8},  {"|b1", TSR_BOOL}};
  for (size_t i = 0; i < sizeof kTable / sizeof kTable[0]; ++i)
    if (strcmp(d, kTable[i].descr) == 0) {
      *out = kTable[i].dtype;
      return 0;
    }
  return -1;
}

int npy_read(const char* path, npy_array* out) {
  memset(out, 0, sizeof *out);
  FILE* f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "npy: cannot open %s\n", path);
    return -1;
  }
  unsigned char head[12];
  char* header = NULL;
  int rc = -1;
  if (fread(head, 1, 10, f) != 10 || memcmp(head, "\x93NUMPY", 6) != 0) goto done;
  size_t hlen = head[8] | (size_t)head[9] << 8;
  if (head[6] >= 2) {
    if (fread(head + 10, 1, 2, f) != 2) goto done;
    hlen |= (size_t)head[10] << 16 | (size_t)head[11] << 24;
  }
  if (hlen > 65536) goto done;
  header = malloc(hlen + 1);
  if (!header || fread(header, 1, hlen, f) != hlen) goto done;
  header[hlen] = 0;
  if (strstr(header, "'fortran_order': True")) goto done;
  const char* d = strstr(header, "'descr': '");
  const char* s = strstr(header, "'shape': (");
  if (!d || !s) goto done;
  char descr[8] = {0};
  d += 10;
  for (size_t i = 0; i < 7 && d[i] && d[i] != '\''; ++i) descr[i] = d[i];
  if (parse_descr(descr, &out->dtype) != 0) goto done;
  s += 10;
  size_t count = 1;
  while (*s && *s != ')') {
    char* end;
    long long v = strtoll(s, &end, 10);
    if (end == s) break;
    if (out->rank == 8 || v < 0) goto done;
    out->shape[out->rank++] = v;
    count *= (size_t)v;
    s = end;
    while (*s == ',' || *s == ' ') ++s;
  }
  out->bytes = count * npy_elem_size(out->dtype);
  out->data = malloc(out->bytes ? out->bytes : 1);
  if (!out->data || fread(out->data, 1, out->bytes, f) != out->bytes) goto done;
  rc = 0;
done:
  if (rc != 0) {
    fprintf(stderr, "npy: %s is not a .npy file this reader handles\n", path);
    npy_free(out);
  }
  free(header);
  fclose(f);
  return rc;
}

void npy_free(npy_array* a) {
  free(a->data);
  a->data = NULL;
  a->bytes = 0;
}
