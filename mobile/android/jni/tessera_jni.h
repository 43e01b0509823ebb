/* What tessera_jni.c (ai.tessera.Model) shares with tessera_jni_train.c (ai.tessera.Trainer,
 * built only over the full runtime: the minimal ones have no trainer). C11. */
#ifndef TESSERA_JNI_H_
#define TESSERA_JNI_H_

#include <jni.h>
#include <stddef.h>

#include "tessera/tessera_c.h"

/* Throws ai.tessera.TesseraException(code, message). */
void throw_tessera(JNIEnv* env, int code, const char* message);
/* Throws err's code and message, then frees err. */
void throw_error(JNIEnv* env, tsr_error* err);
/* Converts one ai.tessera.Model.Tensor (`index` names it in messages) into a tsr_value; NULL
 * with an exception pending. */
tsr_value* to_value(JNIEnv* env, jobject tensor, size_t index);
/* {shape, data} of one value into out[2i], out[2i+1] (float[] or long[]); 0 on success, else
 * -1 with an exception pending. */
int put_output(JNIEnv* env, jobjectArray out, size_t i, const tsr_value* v);

#endif /* TESSERA_JNI_H_ */
