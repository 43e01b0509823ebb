package ai.tessera;

/**
 * A Tessera model ready to run: a loaded .tsr file plus a CPU session, over the C API
 * (tessera/tessera_c.h) through the JNI library {@code tessera_jni}.
 *
 * <pre>
 *   try (Model m = Model.load("/data/local/tmp/model.tsr")) {
 *     Model.Tensor[] out = m.run(Model.Tensor.of(new float[512], 1, 512));
 *     float[] scores = out[0].floats;
 *   }
 * </pre>
 *
 * Errors throw {@link TesseraException} with the C API's code (the CLI's exit codes: 3 invalid
 * model, 4 invalid argument, 5 unsupported, 6 not found, 7 resource limit, ...) and a message
 * naming the place. Thread safety: one Model must not run on two threads at once; close()
 * must not race with run(). Using a closed Model throws IllegalStateException.
 */
public final class Model implements AutoCloseable {
  static {
    // -Dtessera.jni.path=/abs/libtessera_jni.so loads a specific file (host tests); otherwise the
    // library is found on java.library.path (an APK's lib/<abi>/).
    String path = System.getProperty("tessera.jni.path");
    if (path != null) System.load(path);
    else System.loadLibrary("tessera_jni");
  }

  /** A dense row-major tensor of float32 ({@link #floats}) or int64 ({@link #longs}). */
  public static final class Tensor {
    public final long[] shape;
    public final float[] floats; // null unless float32
    public final long[] longs;   // null unless int64

    Tensor(long[] shape, float[] floats, long[] longs) { // package-private: Trainer builds them too
      this.shape = shape;
      this.floats = floats;
      this.longs = longs;
    }

    public static Tensor of(float[] data, long... shape) { return new Tensor(shape.clone(), data, null); }

    public static Tensor of(long[] data, long... shape) { return new Tensor(shape.clone(), null, data); }
  }

  private long session; // tsr_session*, 0 once closed
  private final String[] inputNames;
  private final String[] outputNames;

  private Model(long session, String[] inputNames, String[] outputNames) {
    this.session = session;
    this.inputNames = inputNames;
    this.outputNames = outputNames;
  }

  /** Loads and verifies a .tsr file and creates a session with {@code threads} CPU threads. */
  public static Model load(String path, int threads) {
    if (path == null) throw new NullPointerException("path");
    long s = nativeLoad(path, threads);
    return new Model(s, nativeNames(s, true), nativeNames(s, false));
  }

  public static Model load(String path) { return load(path, 1); }

  public String[] inputNames() { return inputNames.clone(); }

  public String[] outputNames() { return outputNames.clone(); }

  /** Runs the model on inputs in {@link #inputNames()} order; returns the outputs in order. */
  public synchronized Tensor[] run(Tensor... inputs) {
    if (session == 0) throw new IllegalStateException("Model is closed");
    Object[] raw = nativeRun(session, inputs);
    Tensor[] out = new Tensor[raw.length / 2];
    for (int i = 0; i < out.length; ++i) {
      long[] shape = (long[]) raw[2 * i];
      Object data = raw[2 * i + 1];
      out[i] = data instanceof float[] ? new Tensor(shape, (float[]) data, null) : new Tensor(shape, null, (long[]) data);
    }
    return out;
  }

  /** Frees the session; idempotent. */
  @Override
  public synchronized void close() {
    if (session != 0) nativeFree(session);
    session = 0;
  }

  private static native long nativeLoad(String path, int threads);
  private static native String[] nativeNames(long session, boolean inputs);
  // Returns {shape_0, data_0, shape_1, data_1, ...}; data is float[] or long[].
  private static native Object[] nativeRun(long session, Tensor[] inputs);
  private static native void nativeFree(long session);
}
