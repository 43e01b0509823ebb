/* JNI glue for ai.tessera.Trainer over the C API's training functions (tessera_c.h,
 * "Training"). Linked only into the JNI library over the full runtime (tessera_jni); the minimal
 * runtimes have no trainer. Errors become TesseraException as in tessera_jni.c. C11. */
#include <stdint.h>
#include <stdlib.h>

#include "tessera_jni.h"

static tsr_trainer* trainer_of(jlong handle) { return (tsr_trainer*)(intptr_t)handle; }

/* Creates a trainer from a training model file (path) or .tsr bytes. Returns {trainer, buffer}:
 * tsr_model_load_memory uses the bytes in place for as long as the trainer lives, so they are
 * copied to a malloc'ed buffer (0 for a file) that nativeFree releases with the trainer. NULL
 * with an exception pending. */
JNIEXPORT jlongArray JNICALL Java_ai_tessera_Trainer_nativeCreate(JNIEnv* env, jclass cls, jstring path,
                                                                  jbyteArray bytes, jint threads) {
  (void)cls;
  tsr_error* err = NULL;
  tsr_model* model = NULL;
  void* copy = NULL;
  if (path) {
    const char* p = (*env)->GetStringUTFChars(env, path, NULL);
    if (!p) return NULL;
    model = tsr_model_load_file(p, &err);
    (*env)->ReleaseStringUTFChars(env, path, p);
  } else {
    jsize n = (*env)->GetArrayLength(env, bytes);
    copy = malloc(n ? (size_t)n : 1);
    if (!copy) {
      throw_tessera(env, TSR_ERR_RESOURCE, "out of memory");
      return NULL;
    }
    (*env)->GetByteArrayRegion(env, bytes, 0, n, (jbyte*)copy);
    model = tsr_model_load_memory(copy, (size_t)n, &err);
  }
  tsr_trainer* t = NULL;
  if (model) {
    tsr_session_options* o = tsr_session_options_create();
    tsr_session_options_set_threads(o, threads);
    t = tsr_trainer_create(model, o, &err);
    tsr_session_options_free(o);
    tsr_model_free(model); /* the trainer keeps what it needs */
  }
  jlongArray out = t ? (*env)->NewLongArray(env, 2) : NULL;
  if (!out) {
    if (err) throw_error(env, err);
    tsr_trainer_free(t);
    free(copy);
    return NULL;
  }
  const jlong handles[2] = {(jlong)(intptr_t)t, (jlong)(intptr_t)copy};
  (*env)->SetLongArrayRegion(env, out, 0, 2, handles);
  return out;
}

JNIEXPORT jobjectArray JNICALL Java_ai_tessera_Trainer_nativeInputNames(JNIEnv* env, jclass cls, jlong handle) {
  (void)cls;
  size_t n = tsr_trainer_input_count(trainer_of(handle));
  jobjectArray names = (*env)->NewObjectArray(env, (jsize)n, (*env)->FindClass(env, "java/lang/String"), NULL);
  for (size_t i = 0; names && i < n; ++i) {
    jstring str = (*env)->NewStringUTF(env, tsr_trainer_input_name(trainer_of(handle), i));
    if (!str) return NULL;
    (*env)->SetObjectArrayElement(env, names, (jsize)i, str);
    (*env)->DeleteLocalRef(env, str);
  }
  return names;
}

/* step (eval == 0) or eval: returns {Float loss} or {Float loss, shape, data}. */
static jobjectArray step_or_eval(JNIEnv* env, jlong handle, jobjectArray jinputs, jobject jlabels, int eval) {
  size_t n_in = jinputs ? (size_t)(*env)->GetArrayLength(env, jinputs) : 0;
  tsr_value** in = calloc(n_in + 1, sizeof *in);
  tsr_value* labels = NULL;
  tsr_value* prediction = NULL;
  jobjectArray result = NULL;
  if (!in) {
    throw_tessera(env, TSR_ERR_RESOURCE, "out of memory");
    return NULL;
  }
  for (size_t i = 0; i < n_in; ++i) {
    jobject t = (*env)->GetObjectArrayElement(env, jinputs, (jsize)i);
    in[i] = to_value(env, t, i);
    (*env)->DeleteLocalRef(env, t);
    if (!in[i]) goto done;
  }
  if (!jlabels) {
    throw_tessera(env, TSR_ERR_INVALID_ARGUMENT, "labels are null");
    goto done;
  }
  labels = to_value(env, jlabels, n_in);
  if (!labels) goto done;
  tsr_error* err = NULL;
  float loss = 0;
  int rc = eval ? tsr_trainer_eval(trainer_of(handle), (const tsr_value* const*)in, n_in, labels, &loss, &prediction, &err)
                : tsr_trainer_step(trainer_of(handle), (const tsr_value* const*)in, n_in, labels, &loss, &err);
  if (rc != 0) {
    throw_error(env, err);
    goto done;
  }
  jclass float_cls = (*env)->FindClass(env, "java/lang/Float");
  jmethodID value_of = float_cls ? (*env)->GetStaticMethodID(env, float_cls, "valueOf", "(F)Ljava/lang/Float;") : NULL;
  jobject boxed = value_of ? (*env)->CallStaticObjectMethod(env, float_cls, value_of, (jfloat)loss) : NULL;
  if (!boxed) goto done;
  result = (*env)->NewObjectArray(env, eval ? 3 : 1, (*env)->FindClass(env, "java/lang/Object"), NULL);
  if (!result) goto done;
  (*env)->SetObjectArrayElement(env, result, 0, boxed);
  /* put_output fills slots 0 and 1 of a pair; the result holds them at 1 and 2. */
  if (eval) {
    jobjectArray pair = (*env)->NewObjectArray(env, 2, (*env)->FindClass(env, "java/lang/Object"), NULL);
    if (!pair || put_output(env, pair, 0, prediction) != 0) {
      result = NULL;
      goto done;
    }
    (*env)->SetObjectArrayElement(env, result, 1, (*env)->GetObjectArrayElement(env, pair, 0));
    (*env)->SetObjectArrayElement(env, result, 2, (*env)->GetObjectArrayElement(env, pair, 1));
  }
done:
  for (size_t i = 0; i < n_in; ++i) tsr_value_free(in[i]);
  free(in);
  tsr_value_free(labels);
  tsr_value_free(prediction);
  return result;
}

JNIEXPORT jobjectArray JNICALL Java_ai_tessera_Trainer_nativeStep(JNIEnv* env, jclass cls, jlong handle,
                                                                 jobjectArray inputs, jobject labels, jboolean eval) {
  (void)cls;
  return step_or_eval(env, handle, inputs, labels, eval ? 1 : 0);
}

JNIEXPORT void JNICALL Java_ai_tessera_Trainer_nativeSetLearningRate(JNIEnv* env, jclass cls, jlong handle, jfloat lr) {
  (void)cls;
  tsr_error* err = NULL;
  if (tsr_trainer_set_learning_rate(trainer_of(handle), lr, &err) != 0) throw_error(env, err);
}

JNIEXPORT jfloat JNICALL Java_ai_tessera_Trainer_nativeLearningRate(JNIEnv* env, jclass cls, jlong handle) {
  (void)env;
  (void)cls;
  return tsr_trainer_learning_rate(trainer_of(handle));
}

JNIEXPORT jlong JNICALL Java_ai_tessera_Trainer_nativeStepCount(JNIEnv* env, jclass cls, jlong handle) {
  (void)env;
  (void)cls;
  return (jlong)tsr_trainer_step_count(trainer_of(handle));
}

/* what: 0 save checkpoint, 1 export inference, 2 load checkpoint (to/from `path`). */
JNIEXPORT void JNICALL Java_ai_tessera_Trainer_nativeFile(JNIEnv* env, jclass cls, jlong handle, jstring path, jint what) {
  (void)cls;
  const char* p = (*env)->GetStringUTFChars(env, path, NULL);
  if (!p) return;
  tsr_error* err = NULL;
  int rc = what == 0   ? tsr_trainer_save_checkpoint(trainer_of(handle), p, &err)
           : what == 1 ? tsr_trainer_export_inference(trainer_of(handle), p, &err)
                       : tsr_trainer_load_checkpoint(trainer_of(handle), p, &err);
  (*env)->ReleaseStringUTFChars(env, path, p);
  if (rc != 0) throw_error(env, err);
}

/* The checkpoint (export == false) or the inference model as .tsr bytes. */
JNIEXPORT jbyteArray JNICALL Java_ai_tessera_Trainer_nativeBytes(JNIEnv* env, jclass cls, jlong handle, jboolean export_) {
  (void)cls;
  uint8_t* data = NULL;
  size_t size = 0;
  tsr_error* err = NULL;
  int rc = export_ ? tsr_trainer_export_inference_to_buffer(trainer_of(handle), &data, &size, &err)
                   : tsr_trainer_checkpoint_to_buffer(trainer_of(handle), &data, &size, &err);
  if (rc != 0) {
    throw_error(env, err);
    return NULL;
  }
  jbyteArray out = (*env)->NewByteArray(env, (jsize)size);
  if (out) (*env)->SetByteArrayRegion(env, out, 0, (jsize)size, (const jbyte*)data);
  tsr_buffer_free(data);
  return out;
}

JNIEXPORT void JNICALL Java_ai_tessera_Trainer_nativeLoadCheckpointBytes(JNIEnv* env, jclass cls, jlong handle,
                                                                        jbyteArray bytes) {
  (void)cls;
  jsize n = (*env)->GetArrayLength(env, bytes);
  jbyte* data = (*env)->GetByteArrayElements(env, bytes, NULL);
  if (!data) return;
  tsr_error* err = NULL;
  int rc = tsr_trainer_load_checkpoint_memory(trainer_of(handle), data, (size_t)n, &err); /* copies */
  (*env)->ReleaseByteArrayElements(env, bytes, data, JNI_ABORT);
  if (rc != 0) throw_error(env, err);
}

JNIEXPORT void JNICALL Java_ai_tessera_Trainer_nativeFree(JNIEnv* env, jclass cls, jlong handle, jlong buffer) {
  (void)env;
  (void)cls;
  tsr_trainer_free(trainer_of(handle));
  free((void*)(intptr_t)buffer);
}
