export declare const workers: {
    readonly 3: string;
    readonly 4: string;
};
/** Builds both lines' packages (incremental `tsc -b`: about a second when nothing changed). */
export declare const buildBoth: () => void;
export interface WorkerReport {
    readonly line: 3 | 4;
    readonly calls: number;
    readonly tokens: ReadonlyArray<string>;
    readonly errors: ReadonlyArray<string>;
}
/** Runs one worker of `line` to its end; its report. */
export declare const runWorker: (line: 3 | 4, config: Record<string, unknown>) => Promise<WorkerReport>;
//# sourceMappingURL=fleet.d.ts.map