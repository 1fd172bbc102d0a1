import type { CostLevel } from '../domain/targets.ts';
import type { Preferences, RatingRelation } from './dataset.ts';

/**
 * The wording the generator draws from and the oracle reads back (one place, so both sides agree).
 * 20 cuisines × 5 lexical variants, 15 paraphrases per cost level, 4 phrasings per rating relation.
 */

export const CUISINE_VARIANTS: Record<string, readonly string[]> = {
  Italian: ['Italian food', 'Italian cuisine', 'pizza and pasta', 'a trattoria', 'something Italian'],
  Chinese: ['Chinese food', 'Chinese cuisine', 'dim sum', 'Cantonese dishes', 'something Chinese'],
  Japanese: ['Japanese food', 'Japanese cuisine', 'sushi', 'ramen', 'something Japanese'],
  Indian: ['Indian food', 'Indian cuisine', 'a curry house', 'tandoori dishes', 'something Indian'],
  Thai: ['Thai food', 'Thai cuisine', 'pad thai', 'green curry', 'something Thai'],
  Mexican: ['Mexican food', 'Mexican cuisine', 'tacos', 'burritos', 'something Mexican'],
  French: ['French food', 'French cuisine', 'a bistro', 'a brasserie', 'something French'],
  Greek: ['Greek food', 'Greek cuisine', 'souvlaki', 'gyros', 'something Greek'],
  Turkish: ['Turkish food', 'Turkish cuisine', 'döner kebab', 'a kebab shop', 'something Turkish'],
  Vietnamese: ['Vietnamese food', 'Vietnamese cuisine', 'pho', 'banh mi', 'something Vietnamese'],
  Korean: ['Korean food', 'Korean cuisine', 'Korean barbecue', 'bibimbap', 'something Korean'],
  Spanish: ['Spanish food', 'Spanish cuisine', 'tapas', 'paella', 'something Spanish'],
  Lebanese: ['Lebanese food', 'Lebanese cuisine', 'mezze', 'falafel and hummus', 'something Lebanese'],
  German: ['German food', 'German cuisine', 'schnitzel', 'a Bavarian beer hall', 'something German'],
  American: ['American food', 'American cuisine', 'burgers', 'a diner', 'something American'],
  Ethiopian: ['Ethiopian food', 'Ethiopian cuisine', 'injera', 'East African dishes', 'something Ethiopian'],
  Persian: ['Persian food', 'Persian cuisine', 'Iranian dishes', 'saffron rice dishes', 'something Persian'],
  Peruvian: ['Peruvian food', 'Peruvian cuisine', 'ceviche', 'Andean dishes', 'something Peruvian'],
  Moroccan: ['Moroccan food', 'Moroccan cuisine', 'tagine', 'couscous', 'something Moroccan'],
  Brazilian: ['Brazilian food', 'Brazilian cuisine', 'a churrascaria', 'feijoada', 'something Brazilian'],
};
export const CUISINES = Object.keys(CUISINE_VARIANTS);

export const MENUS: Record<string, readonly string[]> = {
  Italian: ['Margherita pizza', 'Spaghetti carbonara', 'Tiramisu'],
  Chinese: ['Kung pao chicken', 'Har gow', 'Mapo tofu'],
  Japanese: ['Salmon nigiri', 'Tonkotsu ramen', 'Gyoza'],
  Indian: ['Chicken tikka masala', 'Palak paneer', 'Garlic naan'],
  Thai: ['Pad thai', 'Green curry', 'Tom yum soup'],
  Mexican: ['Tacos al pastor', 'Chicken burrito', 'Guacamole'],
  French: ['Coq au vin', 'Steak frites', 'Crème brûlée'],
  Greek: ['Souvlaki', 'Moussaka', 'Greek salad'],
  Turkish: ['Döner kebab', 'Lahmacun', 'Baklava'],
  Vietnamese: ['Pho bo', 'Banh mi', 'Summer rolls'],
  Korean: ['Bibimbap', 'Bulgogi', 'Kimchi pancake'],
  Spanish: ['Paella', 'Patatas bravas', 'Gambas al ajillo'],
  Lebanese: ['Falafel plate', 'Hummus', 'Shish taouk'],
  German: ['Wiener schnitzel', 'Käsespätzle', 'Apfelstrudel'],
  American: ['Cheeseburger', 'BBQ ribs', 'Mac and cheese'],
  Ethiopian: ['Doro wat', 'Injera platter', 'Misir wat'],
  Persian: ['Chelo kebab', 'Ghormeh sabzi', 'Tahdig'],
  Peruvian: ['Ceviche', 'Lomo saltado', 'Aji de gallina'],
  Moroccan: ['Lamb tagine', 'Couscous royale', 'Harira'],
  Brazilian: ['Picanha', 'Feijoada', 'Pão de queijo'],
};

export const COST_PHRASES: Record<CostLevel, readonly string[]> = {
  low: [
    'cheap', 'inexpensive', 'budget-friendly', 'for a tight budget', 'low-priced', 'affordable', 'not expensive',
    'easy on the wallet', 'cheap and cheerful', 'low-cost', 'economical', 'a bargain', 'without spending much',
    'wallet-friendly', 'not pricey',
  ],
  medium: [
    'mid-range', 'moderately priced', 'reasonably priced', 'medium-priced', 'mid-priced', 'neither cheap nor expensive',
    'fairly priced', 'at an average price', 'in the middle price range', 'with moderate prices', 'at standard prices',
    'with mid-level prices', 'at normal prices', 'at fair prices', 'for a medium budget',
  ],
  high: [
    'expensive', 'upscale', 'high-end', 'fine dining', 'luxurious', 'fancy', 'pricey', 'worth a splurge', 'premium',
    'gourmet', 'exclusive', 'posh', 'lavish', 'with top-tier prices', 'high-priced',
  ],
};

/** Rating phrase templates; "{v}" is the value with one decimal. Order within a relation does not matter. */
export const RATING_PHRASES: Record<RatingRelation, readonly string[]> = {
  at_least: ['rated at least {v}', 'with a rating of at least {v}', 'with no less than {v} stars', 'with a minimum rating of {v}'],
  above: ['rated above {v}', 'with a rating higher than {v}', 'rated better than {v}', 'with more than {v} stars'],
  around: ['rated around {v}', 'with a rating of about {v}', 'rated roughly {v}', 'with approximately {v} stars'],
  at_most: ['rated at most {v}', 'with a rating no higher than {v}', 'rated {v} or lower', 'with a maximum rating of {v}'],
};

/** Rating values above 3.5, by cost level (dearer places are expected to rate higher). */
export const RATING_VALUES: Record<CostLevel, readonly number[]> = {
  low: [3.6, 3.8, 4.0],
  medium: [3.8, 4.0, 4.2],
  high: [4.2, 4.4, 4.5],
};

/**
 * Utterance templates: {cuisine} is a noun phrase ("sushi", "a trattoria"), {cost} a cost phrase, {rating} a rating
 * phrase. The paper had GPT-4 word each request; these 30, written for icabench (no outside source), vary the opening,
 * the verb (find, navigate, suggest, …), the sentence shape (question, request, statement) and the order of the
 * constraints, with no word of their own that the lexicon reads as a preference.
 */
export const UTTERANCE_TEMPLATES = [
  "I'm hungry for {cuisine}; something {cost} and {rating}.",
  'Can you find {cuisine} nearby? It should be {cost} and {rating}.',
  'Looking for {cuisine}, {cost}, {rating}.',
  'Take me to {cuisine}: {cost}, {rating}.',
  "I'd love {cuisine} right now, {cost} please, {rating}.",
  'Hey, can you find me {cuisine}? Something {cost}, {rating}.',
  'I feel like {cuisine} today. Make it {cost} and {rating}.',
  'Could you look for {cuisine} near me, {cost}, {rating}?',
  'Find {cuisine} on the way, {cost} and {rating}.',
  'My passengers are craving {cuisine}. Something {cost}, {rating}, please.',
  'Where can I get {cuisine} close by? Ideally {cost}, {rating}.',
  'Show me places for {cuisine}, {cost}, {rating}.',
  "Is there {cuisine} nearby that's {cost} and {rating}?",
  'I need a place for {cuisine}: {cost}, {rating}.',
  'Recommend {cuisine} for me, {cost} please, and {rating}.',
  "Let's stop for {cuisine}. I'd like it {cost} and {rating}.",
  'Search for {cuisine} near my location, {cost}, {rating}.',
  'Hey assistant, {cuisine} please, {cost}, {rating}.',
  "I'm in the mood for {cuisine}. Find something {cost}, {rating}.",
  'Get me to {cuisine}, {cost}, {rating}, if you can.',
  'Can you suggest {cuisine}? Keep it {cost} and {rating}.',
  'Please look up {cuisine} for us, {cost} and {rating}.',
  'Any recommendations for {cuisine}? It has to be {cost}, {rating}.',
  'I could go for {cuisine}, something {cost}, {rating}.',
  "Help me find {cuisine} that's {cost}, {rating}.",
  'Route me to {cuisine}; I want it {cost}, {rating}.',
  "We're starving. Is there {cuisine} close by, {cost}, {rating}?",
  'Navigate to {cuisine}, please: {cost}, {rating}.',
  'What options do I have for {cuisine}, {rating} and {cost}?',
  "I'd like to eat {cuisine}. The place should be {rating} and {cost}.",
] as const;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The longest listed phrase found as whole words in `text`, with its key. */
function longestMatch<K extends string>(text: string, table: Record<K, readonly string[]>): K | null {
  const lower = text.toLowerCase();
  let best: { key: K; length: number } | null = null;
  for (const key of Object.keys(table) as K[]) {
    for (const phrase of table[key]) {
      const pattern = new RegExp(`(^|[^\\p{L}])${escapeRegExp(phrase.toLowerCase())}($|[^\\p{L}])`, 'u');
      if (pattern.test(lower) && (!best || phrase.length > best.length)) best = { key, length: phrase.length };
    }
  }
  return best?.key ?? null;
}

/** Canonical cuisine for a phrase ("sushi" → "Japanese"); unknown phrases are returned trimmed. */
export function canonicalCuisine(text: string): string {
  const exact = CUISINES.find((c) => c.toLowerCase() === text.trim().toLowerCase());
  return exact ?? longestMatch(text, CUISINE_VARIANTS) ?? text.trim();
}

const NUMBER = '(\\d+(?:\\.\\d+)?)';
/** Checked in this order so that "no higher than" is not read as "higher than". */
const RATING_PATTERNS: Array<[RatingRelation, RegExp]> = [
  ['at_most', new RegExp(`(?:at most|no higher than|maximum rating of|not above)\\s+${NUMBER}|${NUMBER}\\s*(?:stars?\\s+)?or (?:lower|less)`, 'i')],
  ['at_least', new RegExp(`(?:at least|no less than|minimum rating of)\\s+${NUMBER}|${NUMBER}\\s*(?:stars?\\s+)?or (?:higher|more|better)`, 'i')],
  ['around', new RegExp(`(?:around|about|roughly|approximately|close to)\\s+${NUMBER}`, 'i')],
  ['above', new RegExp(`(?:above|higher than|better than|more than|over)\\s+${NUMBER}`, 'i')],
];

/**
 * Reads the three preferences back from an utterance, with the same lexicon the generator uses.
 * Anything it cannot find is left out (the oracle then cannot check that rule).
 */
export function readPreferences(utterance: string): Partial<Preferences> {
  const found: Partial<Preferences> = {};
  const cuisine = longestMatch(utterance, CUISINE_VARIANTS);
  if (cuisine) found.cuisine = cuisine;
  const cost = longestMatch(utterance, COST_PHRASES);
  if (cost) found.cost = cost;
  for (const [relation, pattern] of RATING_PATTERNS) {
    const match = pattern.exec(utterance);
    if (match) {
      const value = Number(match.slice(1).find((g) => g !== undefined));
      if (value >= 0 && value <= 5) found.rating = { relation, value };
      break;
    }
  }
  return found;
}

export function ratingPhrase(template: string, value: number): string {
  return template.replace('{v}', value.toFixed(1));
}
