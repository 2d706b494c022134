// The onegpu module under test: web/onegpu as the build writes it, its
// files beside the kernel table generated from the build's templates (CMake
// target og_web_kernels; the source folder holds no table). OG_WEB_ONEGPU
// names that folder (CTest sets it); by default build/web/onegpu, the one
// scripts/build.sh writes.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export const moduleDir = resolve(process.env.OG_WEB_ONEGPU || resolve(import.meta.dirname, '../../build/web/onegpu'));

const load = (file) => import(pathToFileURL(resolve(moduleDir, file)).href);
export const { ConvLayout, ConvWeights, Elementwise, convOutputSize, createConv, createGemm, createQGemm, probeFma, qweightsLayout } = await load('onegpu.js');
export const { splitRanges } = await load('rules.js');
export const { parseQFormat, qformatKey } = await load('qweights.js');
export const { default: table } = await load('kernels.generated.js');
