package ai.tessera;

/** An error from the Tessera C API: {@link #code} is tsr_error_code (docs/cli.md, "Errors and exit codes"). */
public final class TesseraException extends RuntimeException {
  public final int code;

  public TesseraException(int code, String message) {
    super(message + " [code " + code + "]");
    this.code = code;
  }
}
