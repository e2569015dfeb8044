/**
 * Embedded Metric Format lines, as CloudWatch Logs turns them into metrics
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html):
 * `_aws.Timestamp` (epoch ms), and per `CloudWatchMetrics` directive a namespace, dimension sets
 * (each a list of member names whose values are top-level members) and metric names whose values
 * are top-level members, a number or an array of numbers (each one a sample).
 */
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { MetricsSink } from '../../shared/composition/handlers.js';
import { SERVICE_NAME } from '../../shared/handlers/service-metrics.js';
import type { Sample } from './evaluate.js';

interface EmfDirective {
  readonly Namespace: string;
  readonly Dimensions?: ReadonlyArray<readonly string[]>;
  readonly Metrics: ReadonlyArray<{ readonly Name: string }>;
}

/** The samples one EMF line carries (none for a line that is not EMF). */
export function samplesOfEmf(line: string): Sample[] {
  let document: Record<string, unknown>;
  try {
    document = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return [];
  }
  const aws = document._aws as { Timestamp?: number; CloudWatchMetrics?: EmfDirective[] } | undefined;
  if (typeof aws?.Timestamp !== 'number' || !Array.isArray(aws.CloudWatchMetrics)) return [];
  const at = aws.Timestamp;
  const samples: Sample[] = [];
  for (const directive of aws.CloudWatchMetrics) {
    const sets = directive.Dimensions?.length ? directive.Dimensions : [[]];
    for (const set of sets) {
      const dimensions = Object.fromEntries(set.map((name) => [name, String(document[name])]));
      for (const { Name } of directive.Metrics) {
        const raw = document[Name];
        const values = Array.isArray(raw) ? raw : [raw];
        for (const value of values)
          if (typeof value === 'number')
            samples.push({
              metric: { namespace: directive.Namespace, metricName: Name, dimensions },
              at,
              value,
            });
      }
    }
  }
  return samples;
}

/**
 * Powertools `Metrics` as the functions use it in Lambda (same namespace, `service` dimension and
 * serializer), whose EMF lines go to `onLine` instead of stdout: the local stack's tap of what the
 * functions would print, without the lines in its own output. Production prints through
 * `lambdaEntry` (shared/composition/handlers.ts) and is not touched.
 */
class TappedMetrics extends Metrics {
  readonly #onLine: (line: string) => void;

  constructor(namespace: string, onLine: (line: string) => void) {
    super({ namespace, serviceName: SERVICE_NAME });
    this.#onLine = onLine;
  }

  /** Also what Powertools calls itself when 100 metrics are stored. */
  override publishStoredMetrics(): this {
    if (!this.hasStoredMetrics()) return this;
    try {
      this.#onLine(JSON.stringify(this.serializeMetrics()));
    } finally {
      this.clearMetrics();
    }
    return this;
  }
}

/** A metrics sink for the local handlers whose EMF lines reach `onLine`. */
export function tappedMetrics(namespace: string, onLine: (line: string) => void): MetricsSink {
  return new TappedMetrics(namespace, onLine);
}
