/** PROVISIONAL: delegates to the model until the typed-array implementation lands. */
import { FirstFitModel } from '../../models/alloc-first-fit';
export class FirstFitAllocator extends FirstFitModel {}
