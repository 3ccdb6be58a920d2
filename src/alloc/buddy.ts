/** PROVISIONAL: delegates to the model until the typed-array implementation lands. */
import { BuddyModel } from '../../models/alloc-buddy';
export class BuddyAllocator extends BuddyModel {}
