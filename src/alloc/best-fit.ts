/** PROVISIONAL: delegates to the model until the typed-array implementation lands. */
import { BestFitModel } from '../../models/alloc-best-fit';
export class BestFitAllocator extends BestFitModel {}
