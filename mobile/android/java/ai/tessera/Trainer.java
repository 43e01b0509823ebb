package ai.tessera;

/**
 * On-device training over the C API's tsr_trainer (tessera/tessera_c.h, "Training"), the same
 * tsr::Trainer that runs {@code tessera train}: the same training model, data and steps on one
 * thread give bit-identical weights here, in C, C++ and on the CLI.
 *
 * <pre>
 *   try (Trainer t = Trainer.create("/data/local/tmp/train.tsr", 1)) {  // from tessera prepare-training
 *     float loss = t.step(new Model.Tensor[] {Model.Tensor.of(images, 32, 1, 28, 28)},
 *                         Model.Tensor.of(labels, 32));                   // labels: long[32] classes
 *     t.saveCheckpoint(dir + "/ckpt.tsr");                               // resumable
 *     t.exportInference(dir + "/tuned.tsr");                             // for Model.load
 *   }
 * </pre>
 *
 * The model is a training model (signatures infer, train_step, eval_step; schema/README.md
 * "Training models"). Inputs are float32 or int64 tensors in {@link #inputNames()} order; labels
 * are int64 class indices [N] (softmax_cross_entropy, nll) or shaped like the prediction (mse).
 * Errors throw {@link TesseraException} (4 invalid argument: counts, dtypes, shapes, a bad
 * learning rate or a checkpoint that does not match, naming them; 6 not found: no train_step or
 * eval_step signature, missing file). Thread safety: as Model. Not in the minimal runtimes'
 * libtessera_jni.so (no trainer there: UnsatisfiedLinkError).
 */
public final class Trainer implements AutoCloseable {
  static {
    String path = System.getProperty("tessera.jni.path");
    if (path != null) System.load(path);
    else System.loadLibrary("tessera_jni");
  }

  /** The loss and the prediction (the model's first output) on a batch. */
  public static final class EvalResult {
    public final float loss;
    public final Model.Tensor prediction;

    EvalResult(float loss, Model.Tensor prediction) {
      this.loss = loss;
      this.prediction = prediction;
    }
  }

  private long trainer; // tsr_trainer*, 0 once closed
  private final long buffer; // the model bytes' copy (create(byte[])), freed with the trainer
  private final String[] inputNames;

  private Trainer(long[] handles) {
    this.trainer = handles[0];
    this.buffer = handles[1];
    this.inputNames = nativeInputNames(trainer);
  }

  /** A trainer over a training model file (or a checkpoint: it resumes) with CPU {@code threads}. */
  public static Trainer create(String path, int threads) {
    if (path == null) throw new NullPointerException("path");
    return new Trainer(nativeCreate(path, null, threads));
  }

  /** A trainer over training-model (.tsr) bytes, copied. */
  public static Trainer create(byte[] model, int threads) {
    if (model == null) throw new NullPointerException("model");
    return new Trainer(nativeCreate(null, model, threads));
  }

  /** The data inputs a step takes (the labels come separately). */
  public String[] inputNames() { return inputNames.clone(); }

  /** One optimizer step; returns the batch's loss before the update. */
  public synchronized float step(Model.Tensor[] inputs, Model.Tensor labels) {
    return (Float) nativeStep(handle(), inputs, labels, false)[0];
  }

  /** A step on one float32 input of the given shape with int64 class labels. */
  public float step(float[] input, long[] shape, long[] labels) {
    return step(new Model.Tensor[] {Model.Tensor.of(input, shape)}, Model.Tensor.of(labels, labels.length));
  }

  /** The loss and prediction with the current weights; nothing is updated. */
  public synchronized EvalResult eval(Model.Tensor[] inputs, Model.Tensor labels) {
    Object[] r = nativeStep(handle(), inputs, labels, true);
    long[] shape = (long[]) r[1];
    Model.Tensor p = r[2] instanceof float[] ? new Model.Tensor(shape, (float[]) r[2], null)
                                             : new Model.Tensor(shape, null, (long[]) r[2]);
    return new EvalResult((Float) r[0], p);
  }

  /** Takes effect at the next step; must be finite and >= 0. */
  public synchronized void setLearningRate(float lr) { nativeSetLearningRate(handle(), lr); }

  public synchronized float learningRate() { return nativeLearningRate(handle()); }

  /** Optimizer steps done so far (resumes with a checkpoint). */
  public synchronized long stepCount() { return nativeStepCount(handle()); }

  /** Writes the training model with the current weights and optimizer state. */
  public synchronized void saveCheckpoint(String path) { nativeFile(handle(), path, 0); }

  /** The checkpoint as .tsr bytes. */
  public synchronized byte[] checkpointBytes() { return nativeBytes(handle(), false); }

  /** Loads the weights and optimizer state of a checkpoint of the same training model. */
  public synchronized void loadCheckpoint(String path) { nativeFile(handle(), path, 2); }

  public synchronized void loadCheckpoint(byte[] checkpoint) { nativeLoadCheckpointBytes(handle(), checkpoint); }

  /** Writes the inference model (current weights as constants) that Model.load runs. */
  public synchronized void exportInference(String path) { nativeFile(handle(), path, 1); }

  public synchronized byte[] exportInferenceBytes() { return nativeBytes(handle(), true); }

  /** Frees the trainer; idempotent. */
  @Override
  public synchronized void close() {
    if (trainer != 0) nativeFree(trainer, buffer);
    trainer = 0;
  }

  private long handle() {
    if (trainer == 0) throw new IllegalStateException("Trainer is closed");
    return trainer;
  }

  private static native long[] nativeCreate(String path, byte[] bytes, int threads);
  private static native String[] nativeInputNames(long trainer);
  // {Float loss} for a step; {Float loss, long[] shape, float[] or long[] data} for eval.
  private static native Object[] nativeStep(long trainer, Model.Tensor[] inputs, Model.Tensor labels, boolean eval);
  private static native void nativeSetLearningRate(long trainer, float lr);
  private static native float nativeLearningRate(long trainer);
  private static native long nativeStepCount(long trainer);
  // what: 0 save checkpoint, 1 export inference, 2 load checkpoint.
  private static native void nativeFile(long trainer, String path, int what);
  private static native byte[] nativeBytes(long trainer, boolean export);
  private static native void nativeLoadCheckpointBytes(long trainer, byte[] checkpoint);
  private static native void nativeFree(long trainer, long buffer);
}
