package ai.tessera;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Host JVM test of the JNI binding: java -Dtessera.jni.path=LIB -cp CLASSES ai.tessera.ModelTest DIR
 * where DIR was written by tests/c_api/prepare_model.py (model.tsr, manifest.txt, ref/*.npy with
 * onnxruntime-node's outputs). Runs the model through ai.tessera.Model, compares every output at
 * rtol = atol = 1e-4, and checks the error paths. Exit 0 pass, 1 fail, 77 not prepared.
 */
public final class ModelTest {
  private static int failures = 0;

  private static void check(boolean ok, String what) {
    System.out.println((ok ? "ok   " : "FAIL ") + what);
    if (!ok) ++failures;
  }

  /** Reads a little-endian C-order .npy of float32 or int64 as a Model.Tensor. */
  static Model.Tensor readNpy(Path p) throws IOException {
    ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(p)).order(ByteOrder.LITTLE_ENDIAN);
    int major = b.get(6);
    int hlen = major == 1 ? b.getShort(8) & 0xffff : b.getInt(8);
    int start = major == 1 ? 10 : 12;
    String header = new String(b.array(), start, hlen, StandardCharsets.ISO_8859_1);
    Matcher d = Pattern.compile("'descr': '([^']+)'").matcher(header);
    Matcher s = Pattern.compile("'shape': \\(([^)]*)\\)").matcher(header);
    if (!d.find() || !s.find()) throw new IOException(p + ": not a .npy file");
    List<Long> dims = new ArrayList<>();
    for (String t : s.group(1).split(",")) if (!t.trim().isEmpty()) dims.add(Long.parseLong(t.trim()));
    long[] shape = dims.stream().mapToLong(Long::longValue).toArray();
    int n = 1;
    for (long v : shape) n *= (int) v;
    b.position(start + hlen);
    switch (d.group(1)) {
      case "<f4": {
        float[] f = new float[n];
        b.asFloatBuffer().get(f);
        return Model.Tensor.of(f, shape);
      }
      case "<i8": {
        long[] l = new long[n];
        b.asLongBuffer().get(l);
        return Model.Tensor.of(l, shape);
      }
      default:
        throw new IOException(p + ": dtype " + d.group(1) + " not handled by this test");
    }
  }

  private static int expectError(Runnable r, String what) {
    try {
      r.run();
      check(false, what + " throws");
      return -1;
    } catch (TesseraException e) {
      System.out.println("     " + e.getMessage());
      return e.code;
    }
  }

  public static void main(String[] args) throws Exception {
    Path dir = Paths.get(args[0]);
    if (!Files.exists(dir.resolve("manifest.txt"))) {
      System.out.println("SKIP: " + dir + "/manifest.txt is absent");
      System.exit(77);
    }
    Map<String, Model.Tensor> inputs = new HashMap<>();
    List<Model.Tensor> refs = new ArrayList<>();
    for (String line : Files.readAllLines(dir.resolve("manifest.txt"))) {
      String[] f = line.split(" ");
      Model.Tensor t = readNpy(dir.resolve("ref").resolve(f[2]));
      if (f[0].equals("input")) inputs.put(f[1], t);
      else refs.add(t);
    }
    String modelPath = dir.resolve("model.tsr").toString();

    check(expectError(() -> Model.load("/nonexistent/model.tsr"), "load(missing)") == 6, "missing file: code 6");
    check(expectError(() -> Model.load(dir.resolve("manifest.txt").toString()), "load(text)") == 3,
          "a text file: code 3 (invalid model)");

    try (Model m = Model.load(modelPath, 2)) {
      String[] names = m.inputNames();
      Model.Tensor[] in = new Model.Tensor[names.length];
      for (int i = 0; i < names.length; ++i) in[i] = inputs.get(names[i]);
      Model.Tensor[] out = m.run(in);
      check(out.length == refs.size(), "output count " + out.length + " == " + refs.size());
      double maxErr = 0;
      boolean within = true;
      for (int i = 0; i < Math.min(out.length, refs.size()); ++i) {
        Model.Tensor a = out[i], r = refs.get(i);
        check(java.util.Arrays.equals(a.shape, r.shape), m.outputNames()[i] + " shape");
        int n = r.floats != null ? r.floats.length : r.longs.length;
        for (int k = 0; k < n; ++k) {
          double x = a.floats != null ? a.floats[k] : a.longs[k];
          double y = r.floats != null ? r.floats[k] : r.longs[k];
          maxErr = Math.max(maxErr, Math.abs(x - y));
          within &= Math.abs(x - y) <= 1e-4 + 1e-4 * Math.abs(y);
        }
      }
      check(within, "outputs match onnxruntime at rtol=atol=1e-4 (max abs err " + maxErr + ")");

      Model.Tensor[] fewer = java.util.Arrays.copyOf(in, in.length - 1);
      check(expectError(() -> m.run(fewer), "run(one input too few)") == 4, "wrong input count: code 4");
      Model.Tensor[] withNull = in.clone();
      withNull[0] = null;
      check(expectError(() -> m.run(withNull), "run(null input)") == 4, "null input: code 4");
      Model.Tensor[] badSize = in.clone();
      badSize[0] = Model.Tensor.of(new float[3], in[0].shape);
      check(expectError(() -> m.run(badSize), "run(data/shape mismatch)") == 4, "data/shape mismatch: code 4");
      m.close();
      m.close(); // idempotent
      try {
        m.run(in);
        check(false, "run after close throws");
      } catch (IllegalStateException e) {
        check(true, "run after close: IllegalStateException");
      }
    }
    System.out.println(failures == 0 ? "ModelTest: all passed" : "ModelTest: " + failures + " failed");
    System.exit(failures == 0 ? 0 : 1);
  }
}
