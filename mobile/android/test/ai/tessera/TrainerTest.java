package ai.tessera;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;

/**
 * Host JVM test of ai.tessera.Trainer: java -Dtessera.jni.path=LIB -cp CLASSES ai.tessera.TrainerTest DIR
 * where DIR was written by tests/c_api/prepare_train_model.py (train.tsr from tessera
 * prepare-training, x.npy / y.npy one sample, cli_checkpoint.tsr from tessera train after three
 * steps on it). Three Java steps give bit-identical weights to the CLI's (same build); eval
 * equals the step's loss before the update; checkpoint bytes resume identically; the exported
 * model runs through ai.tessera.Model and equals eval's prediction; the error paths throw.
 * Exit 0 pass, 1 fail, 77 not prepared.
 */
public final class TrainerTest {
  private static int failures = 0;

  private static void check(boolean ok, String what) {
    System.out.println((ok ? "ok   " : "FAIL ") + what);
    if (!ok) ++failures;
  }

  private static void expectCode(Runnable r, int code, String text, String what) {
    try {
      r.run();
      check(false, what + ": no exception");
    } catch (TesseraException e) {
      check(e.code == code && e.getMessage().contains(text), what + " -> " + e.getMessage());
    }
  }

  public static void main(String[] args) throws Exception {
    Path dir = Paths.get(args[0]);
    if (!Files.exists(dir.resolve("cli_checkpoint.tsr"))) {
      System.out.println("SKIP: " + dir + "/cli_checkpoint.tsr missing (prepare_train_model.py did not run)");
      System.exit(77);
    }
    Model.Tensor x = ModelTest.readNpy(dir.resolve("x.npy"));
    Model.Tensor y = ModelTest.readNpy(dir.resolve("y.npy"));
    String train = dir.resolve("train.tsr").toString();
    Model.Tensor[] in = {x};

    byte[] after3;
    try (Trainer t = Trainer.create(train, 1)) {
      check(Arrays.equals(t.inputNames(), new String[] {"image"}), "inputNames " + Arrays.toString(t.inputNames()));
      check(Math.abs(t.learningRate() - 0.05f) < 1e-7f, "learning rate 0.05 from prepare-training");
      Trainer.EvalResult e = t.eval(in, y);
      float first = t.step(in, y);
      check(e.loss == first, "eval loss " + e.loss + " == first step loss " + first);
      check(e.prediction.shape.length == 2 && e.prediction.shape[1] == 4, "prediction [1, 4]");
      t.step(in, y);
      float third = t.step(x.floats, x.shape, y.longs);
      check(third < first, "loss falls: " + first + " -> " + third);
      check(t.stepCount() == 3, "3 steps");
      after3 = t.exportInferenceBytes();
      try (Trainer cli = Trainer.create(train, 1)) {
        cli.loadCheckpoint(dir.resolve("cli_checkpoint.tsr").toString());
        check(Arrays.equals(cli.exportInferenceBytes(), after3), "Java weights after 3 steps == tessera train's");
      }
      // Export, then run through ai.tessera.Model: eval's prediction exactly.
      Path tuned = dir.resolve("java_tuned.tsr");
      t.exportInference(tuned.toString());
      try (Model m = Model.load(tuned.toString())) {
        check(Arrays.equals(m.run(x)[0].floats, t.eval(in, y).prediction.floats), "exported model == eval prediction");
      }
      // Errors: float labels, no inputs, a negative rate, an inference model as checkpoint.
      expectCode(() -> t.step(in, Model.Tensor.of(new float[] {2f}, 1)), 4, "f32", "float labels");
      expectCode(() -> t.step(new Model.Tensor[0], y), 4, "0 inputs given", "no inputs");
      expectCode(() -> t.setLearningRate(-1f), 4, "learning rate", "negative learning rate");
      expectCode(() -> t.loadCheckpoint(tuned.toString()), 4, "does not match", "inference model as checkpoint");
      expectCode(() -> t.loadCheckpoint("/nonexistent/ckpt.tsr"), 6, "nonexistent", "missing checkpoint");
      check(t.stepCount() == 3, "failed calls changed nothing");
      expectCode(() -> Trainer.create(tuned.toString(), 1), 6, "train_step", "inference model is no training model");
    }

    // Checkpoint bytes after one step, a trainer from them, two more steps: the same weights.
    byte[] ckpt;
    try (Trainer t = Trainer.create(Files.readAllBytes(Paths.get(train)), 1)) {
      t.step(in, y);
      ckpt = t.checkpointBytes();
    }
    try (Trainer r = Trainer.create(ckpt, 1)) {
      check(r.stepCount() == 1, "resumed at step 1");
      r.step(in, y);
      r.step(in, y);
      check(Arrays.equals(r.exportInferenceBytes(), after3), "resumed from checkpoint bytes == uninterrupted");
      r.setLearningRate(0f);
      byte[] before = r.exportInferenceBytes();
      r.step(in, y);
      check(Arrays.equals(r.exportInferenceBytes(), before), "learning rate 0 keeps the weights");
    }
    Trainer closed = Trainer.create(train, 1);
    closed.close();
    closed.close();
    try {
      closed.step(in, y);
      check(false, "closed trainer: no exception");
    } catch (IllegalStateException e) {
      check(true, "closed trainer throws IllegalStateException");
    }
    System.out.println(failures == 0 ? "PASS" : failures + " failure(s)");
    System.exit(failures == 0 ? 0 : 1);
  }
}
