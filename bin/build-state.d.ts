/** Why dist/ cannot be used as it is, or undefined when it is a build of the current src/ (bin/build-state.js). */
export declare function staleBuild(): string | undefined
