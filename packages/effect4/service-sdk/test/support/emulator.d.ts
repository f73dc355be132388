export declare const emulatorBin: string;
export interface RunningEmulator {
    readonly authUrl: string;
    readonly apiUrl: string;
    readonly clientId: string;
    readonly clientSecret: string;
    readonly stats: () => Promise<{
        readonly tokenRequests: Record<string, number>;
        readonly apiRequests: {
            readonly total: number;
            readonly byStatus: Record<string, number>;
        };
    }>;
    readonly control: (path: "config" | "faults" | "reset" | "revoke", body: unknown) => Promise<void>;
    /** A signed-in user's tokens, through the consent page (auto-approve) and a code exchange (confidential client). */
    readonly signIn: (options?: {
        readonly userId?: string;
        readonly scope?: string;
    }) => Promise<{
        readonly access_token: string;
        readonly refresh_token: string;
        readonly expires_in: number;
    }>;
    readonly stop: () => Promise<void>;
}
export declare const startEmulator: (args?: ReadonlyArray<string>) => Promise<RunningEmulator>;
//# sourceMappingURL=emulator.d.ts.map