/** The built console (index.html, assets/): what the gateway serves at /console. Made by `node build.js`. */
export declare const consoleDist: string;
