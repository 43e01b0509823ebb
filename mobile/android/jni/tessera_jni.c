/* JNI glue for ai.tessera.Model over the C API (tessera/tessera_c.h). C11; the same source
 * builds for the host JVM (tests) and for Android with the NDK (README "On the edge").
 * Errors become ai.tessera.TesseraException(code, message); argument misuse on the Java side
 * (NULL tensors, a tensor with neither floats nor longs) becomes code 4 (invalid argument). */
#include <jni.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tessera_jni.h"

void throw_tessera(JNIEnv* env, int code, const char* message) {
  jclass cls = (*env)->FindClass(env, "ai/tessera/TesseraException");
  if (!cls) return; /* NoClassDefFoundError pending */
  jmethodID ctor = (*env)->GetMethodID(env, cls, "<init>", "(ILjava/lang/String;)V");
  jstring msg = (*env)->NewStringUTF(env, message);
  if (!ctor || !msg) return;
  jobject ex = (*env)->NewObject(env, cls, ctor, (jint)code, msg);
  if (ex) (*env)->Throw(env, (jthrowable)ex);
}

void throw_error(JNIEnv* env, tsr_error* err) {
  throw_tessera(env, tsr_error_code(err), tsr_error_message(err));
  tsr_error_free(err);
}

JNIEXPORT jlong JNICALL Java_ai_tessera_Model_nativeLoad(JNIEnv* env, jclass cls, jstring path, jint threads) {
  (void)cls;
  const char* p = (*env)->GetStringUTFChars(env, path, NULL);
  if (!p) return 0;
  tsr_error* err = NULL;
  tsr_model* model = tsr_model_load_file(p, &err);
  (*env)->ReleaseStringUTFChars(env, path, p);
  if (!model) {
    throw_error(env, err);
    return 0;
  }
  tsr_session_options* o = tsr_session_options_create();
  tsr_session_options_set_threads(o, threads);
  tsr_session* s = tsr_session_create(model, o, &err);
  tsr_session_options_free(o);
  tsr_model_free(model); /* the session keeps what it needs */
  if (!s) {
    throw_error(env, err);
    return 0;
  }
  return (jlong)(intptr_t)s;
}

JNIEXPORT jobjectArray JNICALL Java_ai_tessera_Model_nativeNames(JNIEnv* env, jclass cls, jlong handle, jboolean inputs) {
  (void)cls;
  const tsr_session* s = (const tsr_session*)(intptr_t)handle;
  size_t n = inputs ? tsr_session_input_count(s) : tsr_session_output_count(s);
  jobjectArray names = (*env)->NewObjectArray(env, (jsize)n, (*env)->FindClass(env, "java/lang/String"), NULL);
  for (size_t i = 0; names && i < n; ++i) {
    jstring str = (*env)->NewStringUTF(env, inputs ? tsr_session_input_name(s, i) : tsr_session_output_name(s, i));
    if (!str) return NULL;
    (*env)->SetObjectArrayElement(env, names, (jsize)i, str);
    (*env)->DeleteLocalRef(env, str);
  }
  return names;
}

tsr_value* to_value(JNIEnv* env, jobject t, size_t index) {
  char msg[160];
  if (!t) {
    snprintf(msg, sizeof msg, "input[%zu] is null", index);
    throw_tessera(env, TSR_ERR_INVALID_ARGUMENT, msg);
    return NULL;
  }
  jclass cls = (*env)->GetObjectClass(env, t);
  jlongArray jshape = (jlongArray)(*env)->GetObjectField(env, t, (*env)->GetFieldID(env, cls, "shape", "[J"));
  jfloatArray jf = (jfloatArray)(*env)->GetObjectField(env, t, (*env)->GetFieldID(env, cls, "floats", "[F"));
  jlongArray jl = (jlongArray)(*env)->GetObjectField(env, t, (*env)->GetFieldID(env, cls, "longs", "[J"));
  if (!jshape || (!jf && !jl)) {
    snprintf(msg, sizeof msg, "input[%zu] has no %s", index, jshape ? "data" : "shape");
    throw_tessera(env, TSR_ERR_INVALID_ARGUMENT, msg);
    return NULL;
  }
  jsize rank = (*env)->GetArrayLength(env, jshape);
  jlong* shape = (*env)->GetLongArrayElements(env, jshape, NULL);
  jarray data = jf ? (jarray)jf : (jarray)jl;
  jsize n = (*env)->GetArrayLength(env, data);
  void* elems = (*env)->GetPrimitiveArrayCritical(env, data, NULL);
  tsr_error* err = NULL;
  /* jlong is int64_t on every JNI platform; the C API validates bytes against the shape. */
  tsr_value* v = tsr_value_create_tensor(jf ? TSR_F32 : TSR_I64, (const int64_t*)shape, (size_t)rank, elems,
                                         (size_t)n * (jf ? sizeof(jfloat) : sizeof(jlong)), &err);
  (*env)->ReleasePrimitiveArrayCritical(env, data, elems, JNI_ABORT);
  (*env)->ReleaseLongArrayElements(env, jshape, shape, JNI_ABORT);
  if (!v) throw_error(env, err);
  return v;
}

int put_output(JNIEnv* env, jobjectArray out, size_t i, const tsr_value* v) {
  size_t rank = tsr_value_rank(v);
  jlongArray shape = (*env)->NewLongArray(env, (jsize)rank);
  if (!shape) return -1;
  if (rank) (*env)->SetLongArrayRegion(env, shape, 0, (jsize)rank, (const jlong*)tsr_value_shape(v));
  (*env)->SetObjectArrayElement(env, out, (jsize)(2 * i), shape);
  jarray data;
  if (tsr_value_dtype(v) == TSR_F32) {
    jsize n = (jsize)(tsr_value_size(v) / sizeof(float));
    data = (*env)->NewFloatArray(env, n);
    if (data && n) (*env)->SetFloatArrayRegion(env, (jfloatArray)data, 0, n, (const jfloat*)tsr_value_data(v));
  } else if (tsr_value_dtype(v) == TSR_I64) {
    jsize n = (jsize)(tsr_value_size(v) / sizeof(int64_t));
    data = (*env)->NewLongArray(env, n);
    if (data && n) (*env)->SetLongArrayRegion(env, (jlongArray)data, 0, n, (const jlong*)tsr_value_data(v));
  } else {
    char msg[120];
    snprintf(msg, sizeof msg, "output[%zu] has dtype %d; the Java binding returns float32 and int64 only", i,
             (int)tsr_value_dtype(v));
    throw_tessera(env, TSR_ERR_UNSUPPORTED, msg);
    return -1;
  }
  if (!data) return -1;
  (*env)->SetObjectArrayElement(env, out, (jsize)(2 * i + 1), data);
  return 0;
}

JNIEXPORT jobjectArray JNICALL Java_ai_tessera_Model_nativeRun(JNIEnv* env, jclass cls, jlong handle,
                                                              jobjectArray jinputs) {
  (void)cls;
  tsr_session* s = (tsr_session*)(intptr_t)handle;
  size_t n_in = jinputs ? (size_t)(*env)->GetArrayLength(env, jinputs) : 0;
  size_t n_out = tsr_session_output_count(s);
  tsr_value** in = calloc(n_in + 1, sizeof *in);
  tsr_value** out = calloc(n_out + 1, sizeof *out);
  jobjectArray result = NULL;
  if (!in || !out) {
    throw_tessera(env, TSR_ERR_RESOURCE, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < n_in; ++i) {
    jobject t = (*env)->GetObjectArrayElement(env, jinputs, (jsize)i);
    in[i] = to_value(env, t, i);
    (*env)->DeleteLocalRef(env, t);
    if (!in[i]) goto done;
  }
  tsr_error* err = NULL;
  if (tsr_session_run(s, (const tsr_value* const*)in, n_in, out, n_out, &err) != 0) {
    throw_error(env, err);
    goto done;
  }
  result = (*env)->NewObjectArray(env, (jsize)(2 * n_out), (*env)->FindClass(env, "java/lang/Object"), NULL);
  for (size_t i = 0; result && i < n_out; ++i)
    if (put_output(env, result, i, out[i]) != 0) result = NULL;
done:
  for (size_t i = 0; in && i < n_in; ++i) tsr_value_free(in[i]);
  for (size_t i = 0; out && i < n_out; ++i) tsr_value_free(out[i]);
  free(in);
  free(out);
  return result;
}

JNIEXPORT void JNICALL Java_ai_tessera_Model_nativeFree(JNIEnv* env, jclass cls, jlong handle) {
  (void)env;
  (void)cls;
  tsr_session_free((tsr_session*)(intptr_t)handle);
}
