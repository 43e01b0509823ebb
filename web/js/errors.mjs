// TesseraError, the package's one error type (codes: tessera.d.ts TesseraErrorCode).

// tsr::StatusCode values (= the CLI's exit codes and the C API's TSR_ERR_* values) ->
// TesseraError.code; TesseraError.exitCode keeps the number.
export const kCode = {
  3: 'invalid_model', 4: 'invalid_argument', 5: 'unsupported', 6: 'not_found', 7: 'resource_exhausted',
  8: 'backend', 9: 'internal',
};
const kExitCode = Object.fromEntries(Object.entries(kCode).map(([k, v]) => [v, Number(k)]));

export class TesseraError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'TesseraError';
    this.code = code;
    this.exitCode = kExitCode[code] ?? kExitCode.internal;
  }
}

/** An invalid_argument TesseraError. */
export function argError(message) { return new TesseraError('invalid_argument', message); }
