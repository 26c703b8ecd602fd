/**
 * The process logger: pino JSON lines on stdout. Fixed messages plus fields (guard key, reconcileID,
 * generations, phase transition, chosen action); whole objects are never logged.
 */
import { pino, type Logger } from 'pino';

export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { component: 'rollout-guard' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  });
}
