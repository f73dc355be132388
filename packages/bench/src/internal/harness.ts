/**
 * The measuring: tinybench for warm-up and samples, run in interleaved rounds so that every figure and its baseline
 * see the same machine. A task does `batch` operations per sample (so a sample lasts well above the timer's grain);
 * a task's figure is the median over rounds of its per-round median (tinybench's p50), per operation. A ratio is the
 * median of the per-round ratios, and its spread is their range.
 */
import { Bench } from "tinybench"

export interface Settings {
  /** interleaved rounds per comparison */
  readonly rounds: number
  /** tinybench's sampling budget per task and round (ms) */
  readonly time: number
  /** tinybench's warm-up budget per task and round (ms) */
  readonly warmupTime: number
  /** tinybench's minimum samples (and warm-up runs) per task and round */
  readonly iterations: number
}

export interface Task {
  readonly name: string
  /** operations one call of `fn` performs */
  readonly batch: number
  readonly fn: () => unknown
  readonly async: boolean
}

export interface Measured {
  readonly name: string
  /** median nanoseconds per operation (median over rounds of each round's median sample) */
  readonly nsPerOp: number
  /** per-round medians, ns per operation */
  readonly rounds: ReadonlyArray<number>
  /** per-round means (total time over operations: garbage collection pauses included), ns per operation */
  readonly meanRounds: ReadonlyArray<number>
  /** samples taken over all rounds */
  readonly samples: number
  /** tinybench's median absolute deviation over the median, worst round */
  readonly relativeMad: number
}

export const median = (values: ReadonlyArray<number>): number => {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

export interface Ratio {
  readonly ratio: number
  readonly min: number
  readonly max: number
}

/** The median and range of `numerator[i] / denominator[i]` over rounds. */
export const ratioOf = (numerator: ReadonlyArray<number>, denominator: ReadonlyArray<number>): Ratio => {
  const ratios = numerator.map((value, index) => value / denominator[index]!)
  return { ratio: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) }
}

/**
 * Throughput over a baseline's: the mean over rounds of each one's throughput (operations over total time, so a
 * garbage collection pause counts), divided; the range is that of the per-round ratios. Arguments: per-round mean
 * ns per operation (`Measured.meanRounds`).
 */
export const throughputRatioOf = (figure: ReadonlyArray<number>, baseline: ReadonlyArray<number>): Ratio => {
  const mean = (values: ReadonlyArray<number>) => values.reduce((sum, value) => sum + value, 0) / values.length
  const throughput = (nsPerOp: ReadonlyArray<number>) => nsPerOp.map((ns) => 1e9 / ns)
  const ratios = figure.map((ns, index) => baseline[index]! / ns)
  return {
    ratio: mean(throughput(figure)) / mean(throughput(baseline)),
    min: Math.min(...ratios),
    max: Math.max(...ratios)
  }
}

/** Runs the tasks in `settings.rounds` interleaved rounds (the order rotates each round). */
export const measure = async (tasks: ReadonlyArray<Task>, settings: Settings): Promise<ReadonlyArray<Measured>> => {
  const perRound = tasks.map(() => [] as Array<number>)
  const meanPerRound = tasks.map(() => [] as Array<number>)
  const samples = tasks.map(() => 0)
  const relativeMad = tasks.map(() => 0)
  for (let round = 0; round < settings.rounds; round++) {
    const bench = new Bench({
      time: settings.time,
      warmupTime: settings.warmupTime,
      warmupIterations: Math.max(1, settings.iterations >> 1),
      iterations: settings.iterations,
      timestampProvider: "hrtimeNow",
      throws: true
    })
    const order = tasks.map((_, index) => (index + round) % tasks.length)
    for (const index of order) bench.add(tasks[index]!.name, tasks[index]!.fn, { async: tasks[index]!.async })
    await bench.run()
    for (const [index, task] of tasks.entries()) {
      const result = bench.getTask(task.name)!.result
      if (!("latency" in result)) throw new Error(`${task.name}: the harness recorded no samples (${result.state})`)
      const { mad, mean, p50, samplesCount } = result.latency
      perRound[index]!.push((p50 * 1e6) / task.batch)
      meanPerRound[index]!.push((mean * 1e6) / task.batch)
      samples[index]! += samplesCount
      relativeMad[index] = Math.max(relativeMad[index]!, mad / p50)
    }
  }
  return tasks.map((task, index) => ({
    name: task.name,
    nsPerOp: median(perRound[index]!),
    rounds: perRound[index]!,
    meanRounds: meanPerRound[index]!,
    samples: samples[index]!,
    relativeMad: relativeMad[index]!
  }))
}

/** Wall time (ms) of one run of `fn`. */
export const timed = async <A>(fn: () => Promise<A>): Promise<{ readonly ms: number; readonly value: A }> => {
  const start = process.hrtime.bigint()
  const value = await fn()
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, value }
}
