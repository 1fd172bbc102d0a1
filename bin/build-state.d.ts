export declare const BUILD_STAMP: string;
export declare const BUILD_SOURCES: string[];
export declare function isBuildSource(path: string): boolean;
export declare function freshBuildEntry(): string | null;
