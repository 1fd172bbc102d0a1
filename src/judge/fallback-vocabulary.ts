/**
 * The words the fallback detector (./fallback.ts) reads replies and driver turns with, as data: one list per
 * language (en, de, fr), each entry a regular-expression fragment matched case-insensitively on word
 * boundaries against text already folded to lower case without accents ("à" → "a"), with straight
 * apostrophes. Add a language by adding its lists; the detector's rules do not change.
 */
export interface FallbackVocabulary {
  /** a reply that declines to understand: "didn't understand", "could you rephrase", "say that again" */
  notUnderstood: readonly string[];
  /** a reply that declines to act without a reason the bench accepts: "I can't help with that", "I'm not able to" */
  cannotHelp: readonly string[];
  /** a question asking only for the same words again, not for a missing detail: "could you rephrase?", "what do you mean?" */
  repeatQuestion: readonly string[];
  /** a refusal that gives a driving-safety reason: justified, never a fallback */
  safetyReason: readonly string[];
  /** "I'm unable to find …": a truthful not-found, never a fallback */
  notFound: readonly string[];
  /** a driver turn that is only social (thanks, acknowledgement, greeting, farewell): it asks for nothing */
  social: readonly string[];
}

export const FALLBACK_VOCABULARY: Readonly<Record<'en' | 'de' | 'fr', FallbackVocabulary>> = {
  en: {
    notUnderstood: [
      "(didn't|did not|don't|do not|couldn't|could not|can't|cannot) (quite )?(understand|follow|catch|get)( that| you| what you (said|meant|mean))?",
      "(i'm|i am) not sure (what|i understand|i follow)",
      "(i'm|i am) (sorry, )?(not able|unable) to understand",
      '(could|can|would) you (please )?(rephrase|repeat|say (that|it) again|say (that|it) differently|try again)',
      'please (rephrase|repeat|try again|say (that|it) again)',
      'say (that|it) again',
    ],
    cannotHelp: [
      "(i )?(can't|cannot|can not) help( you)? with (that|this)",
      "(i'm|i am) (sorry, )?(not able|unable) to",
      "i (can't|cannot) (help|assist)",
      "(that's|that is) (not )?something i (can't|cannot|can not|am not able to) (help|do)",
      "(i )?(can't|cannot) do (that|this)( for you)?",
      "(i )?(don't|do not) know how to (help|do) (with )?(that|this)",
      "(i'm|i am) (afraid|sorry),? (i|that) (can't|cannot)",
    ],
    repeatQuestion: ['rephrase', 'repeat (that|it|yourself|your (request|question))', 'say (that|it) (again|differently)', 'try again', 'what do you mean', 'come again', 'pardon', 'what was that'],
    safetyReason: ['for your safety', 'while (you are |you\'re )?(driving|moving)', 'while the (car|vehicle) is (moving|in motion)', 'distract(ing|ion)?', 'not safe', 'unsafe', 'safety'],
    notFound: ['(find|locate)', 'no (results?|matches|places?)', 'there (is|are) no', 'nothing (matches|found)'],
    social: [
      'thanks?( you)?( so much| very much| a lot)?( for (all )?(the|your) help)?( car)?',
      'ok(ay)?', 'great', 'awesome', 'perfect', 'cool', 'nice', 'good', 'excellent', 'wonderful', 'fine', 'alright', 'all right',
      'sounds (good|great)', 'got it', 'that works', '(that|this) is (great|perfect|good)', 'cheers', 'much appreciated', 'appreciate it',
      '(good)?bye', 'see you', "that's all", 'that is all', 'hi', 'hello', 'hey', 'you too', 'no thanks', 'no', 'sure',
    ],
  },
  de: {
    notUnderstood: [
      '(ich habe|hab) (das|dich|sie) (leider )?nicht verstanden',
      '(das|dich|sie) (habe ich )?(leider )?nicht verstanden',
      'ich verstehe (das |dich |sie )?(leider )?nicht',
      '(kannst du|konnen sie|konntest du|konnten sie) (das )?(bitte )?(anders formulieren|umformulieren|wiederholen|noch( ein)?mal sagen)',
      'bitte (wiederholen|anders formulieren|noch( ein)?mal)',
    ],
    cannotHelp: [
      '(dabei|damit) kann ich (dir |ihnen )?(leider )?nicht helfen',
      'das kann ich (leider )?nicht',
      'ich kann (dir |ihnen )?(dabei |damit )?(leider )?nicht helfen',
      'ich bin (leider )?nicht in der lage',
    ],
    repeatQuestion: ['wiederholen', 'anders formulieren', 'umformulieren', 'noch( ein)?mal sagen', 'wie bitte', 'was meinst du', 'was meinen sie'],
    safetyReason: ['sicherheit', 'wahrend der fahrt', 'beim fahren', 'ablenk(en|ung)', 'nicht sicher'],
    notFound: ['(finden|gefunden)', 'keine (ergebnisse|treffer)', 'es gibt (kein|keine)'],
    social: ['danke( schon| sehr)?( fur die hilfe)?', 'vielen dank', 'ok(ay)?', 'gut', 'super', 'prima', 'toll', 'perfekt', 'alles klar', 'passt', 'tschuss', 'auf wiedersehen', 'hallo', 'das wars', 'das ist alles'],
  },
  fr: {
    notUnderstood: [
      "je n'ai pas (bien )?compris",
      'je ne (vous |te )?comprends pas',
      '(pouvez-vous|pourriez-vous|peux-tu|pourrais-tu|pouvez vous|pourriez vous) (le )?(reformuler|repeter|redire)',
      'veuillez (reformuler|repeter)',
    ],
    cannotHelp: ["je ne peux pas (vous |t')?aider", 'je ne peux pas (faire )?(ca|cela)', "je ne suis pas en mesure (de|d')", "je n'y arrive pas"],
    repeatQuestion: ['reformuler', 'repeter', 'redire', 'pardon', "qu'entendez-vous", 'que voulez-vous dire'],
    safetyReason: ['securite', 'pendant (que vous conduisez|la conduite)', 'en conduisant', 'distraire', 'distraction', 'dangereux'],
    notFound: ['(trouver|trouve)', 'aucun (resultat|lieu)', "il n'y a (pas|aucun)"],
    social: ['merci( beaucoup| bien)?( pour (votre|ton) aide)?', "d'accord", 'ok(ay)?', 'parfait', 'super', 'genial', 'tres bien', 'bien', 'au revoir', 'bonjour', 'salut', "c'est tout", 'a bientot'],
  },
};
