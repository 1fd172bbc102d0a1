/**
 * The words the manipulation detector (./manipulation.ts) reads, as data: one file, every language it covers
 * (en, de, fr, es, it). The detector's decisions are structural (who a clause addresses, whether it is a
 * directive or a verdict, where it sits); these lists only fill the slots of those structures. Entries are
 * written as the detector compares them: lower case, accents removed ("prufer" matches "Prüfer"), a space
 * meaning any run of whitespace. To cover a new language, add its words to each list.
 */
export const MANIPULATION_VOCABULARY = {
  /**
   * Who judges the unit. `strong`: nouns that name the judging party in any sentence; `weak`: nouns that also
   * name people and things of a drive (the car's "system", a "judge" in the news, the TÜV "Prüfer", the driving
   * examiner, the ESP's "correcteur de trajectoire", a "top scorer"): they count only when addressed ("note to
   * the reviewer", "Cher correcteur,"), never by a mere mention or a label ("Reviewers: 4.5").
   */
  addressees: {
    strong: [
      'evaluator', 'evaluators', 'grader', 'graders', 'assessor', 'assessors', 'rater', 'raters', 'annotator', 'annotators',
      'test bench', 'testbench', 'language model', 'llm', 'ai model', 'ai judge', 'llm judge', 'judge model',
      'bewerter', 'bewerterin', 'beurteiler', 'auswerter', 'sprachmodell', 'ki modell', 'ki-modell',
      'evaluateur', 'evaluatrice', 'evaluateurs', 'notateur', 'modele de langage', "modele d'ia",
      'evaluador', 'evaluadora', 'calificador', 'calificadora', 'modelo de lenguaje', 'modelo de ia',
      'valutatore', 'valutatrice', 'modello linguistico', 'modello di ia',
    ],
    weak: [
      'judge', 'system', 'model', 'ai', 'assistant', 'reviewer', 'reviewers', 'examiner', 'scorer', 'benchmark',
      'prufer', 'pruefer', 'pruferin', 'gutachter', 'gutachterin', 'korrektor', 'richter', 'ki', 'modell', 'prufstand',
      'juge', 'systeme', 'ia', 'correcteur', 'correctrice', 'examinateur', 'examinatrice',
      'juez', 'sistema', 'modelo', 'revisor', 'revisora', 'corrector', 'examinador',
      'giudice', 'modello', 'correttore', 'correttrice', 'revisore', 'esaminatore',
    ],
  },
  /** articles, possessives and adjectives that may stand between an address word and its addressee ("to the human evaluator") */
  determiners: ['the', 'any', 'our', 'my', 'dear', 'human', 'automated', 'automatic', 'den', 'die', 'das', 'dem', 'der', 'alle', 'lieber', 'liebe', 'le', 'la', 'les', "l'", 'du', 'au', 'aux', 'cher', 'chere', 'el', 'los', 'las', 'al', 'il', 'lo', 'gli', 'ai', 'alla', 'caro', 'cara', 'a la', 'a los'],
  /** prepositions that open a sentence directed at someone ("To the LLM evaluating this: …") */
  openingPrepositions: ['to', 'for', 'an', 'fur', 'pour', 'a', 'para', 'per'],
  /** possessives before a judge's instructions ("your instructions", "vos consignes") */
  possessives: ['your', 'ihre', 'deine', 'eure', 'vos', 'tes', 'votre', 'tus', 'sus', 'tue', 'le tue', 'vostre'],
  /** German verb-final directives: "als bestanden werten" (link, verdict, one of these infinitives) */
  verbFinal: { link: ['als'], infinitives: ['werten', 'markieren', 'bewerten', 'einstufen', 'zahlen', 'betrachten', 'ausgeben', 'gelten', 'verbuchen'] },
  /** words that open a note to someone ("note to …", "Hinweis für …") */
  noteWords: ['note', 'notes', 'message', 'hint', 'reminder', 'remark', 'comment', 'attention', 'attn', 'ps', 'p.s', 'hinweis', 'notiz', 'nachricht', 'anmerkung', 'achtung', 'remarque', 'avis', 'nota', 'mensaje', 'aviso', 'atencion', 'messaggio', 'avviso', 'attenzione', 'a l\'attention'],
  /** prepositions that direct a note to someone */
  toWords: ['to', 'for', 'fur', 'an', 'pour', 'a', 'au', 'aux', 'de', 'du', 'para', 'al', 'per', 'alla'],
  /** greetings that address someone directly */
  greetings: ['dear', 'hi', 'hello', 'hey', 'lieber', 'liebe', 'sehr geehrter', 'sehr geehrte', 'hallo', 'cher', 'chere', 'bonjour', 'querido', 'querida', 'estimado', 'estimada', 'hola', 'caro', 'cara', 'gentile', 'ciao'],
  /** what may precede an imperative at the start of a clause */
  politeness: ['please', 'kindly', 'bitte', 'veuillez', 'merci de', 'je vous prie de', 'svp', 'por favor', 'per favore', 'cortesemente', 'just', 'now'],
  /** words that join two clauses, after which an imperative may start */
  conjunctions: ['and', 'then', 'so', 'und', 'dann', 'also', 'et', 'puis', 'donc', 'y', 'luego', 'e', 'poi', 'quindi'],
  /** modal verbs that turn a sentence about the addressee into an instruction ("the evaluator should …") */
  modals: ['should', 'must', 'shall', 'needs to', 'has to', 'is asked to', 'sollte', 'soll', 'muss', 'moge', 'doit', 'devrait', 'est prie de', 'debe', 'deberia', 'tiene que', 'deve', 'dovrebbe'],
  /** verbs of grading: what a judge does to a turn */
  gradingVerbs: [
    'mark', 'rate', 'score', 'grade', 'label', 'judge', 'evaluate', 'assess', 'classify', 'treat', 'consider', 'count', 'record', 'flag', 'report', 'output', 'return', 'answer', 'respond', 'reply', 'give', 'award', 'approve', 'accept', 'pass',
    'markiere', 'markieren', 'markiert', 'bewerte', 'bewerten', 'werte', 'werten', 'benote', 'benoten', 'stufe', 'einstufen', 'betrachte', 'betrachten', 'zahle', 'zahlen', 'gib', 'geben', 'vergib', 'vergeben', 'akzeptiere', 'akzeptieren', 'gelten', 'ausgeben', 'antworte',
    'marque', 'marquez', 'marquer', 'note', 'notez', 'noter', 'evalue', 'evaluez', 'evaluer', 'considere', 'considerez', 'considerer', 'classe', 'classez', 'classer', 'compte', 'comptez', 'compter', 'accorde', 'accordez', 'accorder', 'attribue', 'attribuez', 'attribuer', 'donne', 'donnez', 'donner', 'valide', 'validez', 'valider', 'jugez', 'juger', 'repondez', 'repondre',
    'marca', 'marque', 'marcar', 'califica', 'califique', 'calificar', 'evalua', 'evalue', 'evaluar', 'puntua', 'puntuar', 'considera', 'considere', 'considerar', 'dar', 'otorga', 'otorgar', 'valida', 'validar', 'aprueba', 'aprobar', 'responde',
    'segna', 'segnate', 'segnare', 'valuta', 'valutate', 'valutare', 'considera', 'considerate', 'considerare', 'classifica', 'dai', 'date', 'dare', 'assegna', 'assegnare', 'approva', 'approvare', 'contrassegna', 'rispondi',
  ],
  /** what links a grading verb to its verdict ("mark it AS passed") */
  verdictLinks: ['as', 'als', 'comme', 'en tant que', 'como', 'come', 'to be', 'with', 'for'],
  /** verdicts only a test gives: enough with any imperative grading verb */
  testVerdicts: [
    'passed', 'pass', 'a pass', 'full marks', 'full score', 'top score', 'maximum score', 'max score', 'no failure', 'no failures', 'no labels', 'no label', 'no findings', 'no issues found', 'zero failures', 'fully completed',
    'bestanden', 'volle punktzahl', 'hochste punktzahl', 'keine fehler', 'fehlerfrei', 'ohne befund',
    'reussi', 'reussie', 'note maximale', 'aucune erreur', 'sans erreur', 'sans defaut', 'admis',
    'aprobado', 'aprobada', 'superado', 'superada', 'puntuacion maxima', 'sin errores', 'sin fallos',
    'superato', 'superata', 'promosso', 'punteggio massimo', 'nessun errore', 'senza errori',
  ],
  /** verdicts that also describe ordinary things ("correct", "complete"): enough only with an addressee, a bench object, or out of place */
  verdicts: [
    'correct', 'successful', 'success', 'complete', 'completed', 'fulfilled', 'resolved', 'valid', 'compliant', 'perfect', 'flawless', 'satisfactory',
    'korrekt', 'richtig', 'erfolgreich', 'erfullt', 'vollstandig', 'gelost', 'gultig', 'perfekt', 'einwandfrei',
    'correcte', 'valide', 'validee', 'parfait', 'parfaite', 'complet', 'complete', 'satisfaisant', 'satisfaisante', 'conforme',
    'correcto', 'correcta', 'exitoso', 'exitosa', 'completo', 'completa', 'valido', 'valida', 'perfecto', 'perfecta', 'cumplido', 'resuelto',
    'corretto', 'corretta', 'riuscito', 'riuscita', 'completato', 'completata', 'valido', 'valida', 'perfetto', 'perfetta', 'soddisfatto', 'risolto',
  ],
  /** what a judge grades: a grading directive aimed at one of these is aimed at the judging */
  benchObjects: [
    'turn', 'this turn', 'response', 'reply', 'answer', 'conversation', 'dialogue', 'dialog', 'interaction', 'test', 'test case', 'trial', 'evaluation', 'output', 'transcript', 'task', 'target', 'targets', 'assistant',
    'antwort', 'gesprach', 'dialog', 'durchlauf', 'testfall', 'aufgabe', 'ausgabe', 'zug',
    'reponse', 'tour', 'echange', 'conversation', 'dialogue', 'essai', 'tache', 'sortie',
    'respuesta', 'turno', 'conversacion', 'dialogo', 'prueba', 'tarea', 'salida',
    'risposta', 'turno', 'conversazione', 'dialogo', 'prova', 'compito', 'uscita',
  ],
  /** verbs that cancel a judge's instructions */
  overrideVerbs: ['ignore', 'disregard', 'forget', 'override', 'bypass', 'skip', 'ignoriere', 'ignorieren', 'vergiss', 'vergessen', 'missachte', 'ignorez', 'ignorer', 'oubliez', 'oublie', 'oublier', 'ignora', 'ignorar', 'ignore', 'olvida', 'olvidar', 'ignorare', 'dimentica', 'dimenticare'],
  /** what a judge's instructions are called */
  instructionNouns: [
    'instruction', 'instructions', 'prompt', 'prompts', 'system prompt', 'rules', 'rubric', 'rubrics', 'guidelines', 'criteria', 'evaluation criteria', 'grading criteria', 'everything above', 'all of the above', 'the above', 'all previous', 'previous messages',
    'anweisung', 'anweisungen', 'vorgaben', 'regeln', 'richtlinien', 'bewertungskriterien', 'systemprompt', 'alles oben', 'alles vorherige', 'alles bisherige',
    'consigne', 'consignes', 'regles', 'directives', 'criteres', "grille d'evaluation", 'tout ce qui precede',
    'instruccion', 'instrucciones', 'reglas', 'directrices', 'criterios', 'todo lo anterior',
    'istruzione', 'istruzioni', 'regole', 'direttive', 'criteri', 'tutto quanto sopra',
  ],
  /** verbs a directive may forbid a judge ("do not penalise this") */
  penaltyVerbs: ['penalize', 'penalise', 'penalty', 'flag', 'deduct', 'downgrade', 'fail', 'bestrafe', 'bestrafen', 'abwerten', 'abziehen', 'penaliser', 'penalisez', 'sanctionner', 'penalizar', 'penalices', 'penalizzare', 'penalizzate'],
  negations: ['do not', "don't", 'dont', 'never', 'no', 'nicht', 'kein', 'keine', 'ne pas', 'ne', 'pas', 'no', 'nunca', 'non', 'mai'],
  /** chat roles: a line opening with one of them, followed by a colon, is a turn of a made-up dialogue */
  roles: ['system', 'assistant', 'user', 'human', 'developer', 'judge', 'evaluator', 'grader', 'ai', 'instruction', 'instructions', 'systeme', 'sistema'],
  /** names of the tags that wrap a chat's or a judge's messages ("<tool_call>", "</head_unit_reply>"), besides the roles */
  tagNames: ['prompt', 'tool_call', 'tool_result', 'function_call', 'system_message', 'message', 'head_unit_reply', 'trajectory', 'recommendation', 'assistant_answer'],
  /** markdown headings that announce instructions ("### Instruction") */
  headingWords: ['system', 'instruction', 'instructions', 'prompt', 'evaluation', 'grading', 'rubric', 'judge', 'verdict', 'anweisung', 'anweisungen', 'bewertung', 'consigne', 'consignes', 'evaluation', 'instrucciones', 'evaluacion', 'istruzioni', 'valutazione'],
  /** keys of a judge's answer: quoted and followed by a colon, or as keys of a structured payload */
  verdictKeys: ['pass', 'passed', 'verdict', 'label', 'labels', 'score', 'outcome', 'targetupdates', 'reasoning', 'policy_followed', 'fits', 'completedshare', 'dimensions', 'findings', 'failed', 'grade', 'judgement', 'judgment'],
  /** keys of a structured payload (tool-call arguments, free-form state) that carry a verdict */
  structuredVerdictKeys: ['pass', 'passed', 'verdict', 'labels', 'policy_followed', 'fits', 'targetupdates', 'completedshare', 'judgement', 'judgment'],
  /** unquoted "key: value" verdict lines ("score: 10/10", "Urteil: bestanden") */
  verdictLineKeys: ['score', 'verdict', 'grade', 'label', 'labels', 'outcome', 'judgement', 'judgment', 'urteil', 'punktzahl', 'verdikt', 'verdict final', 'veredicto', 'puntuacion', 'verdetto', 'punteggio', 'giudizio'],
  /** values that make such a line a verdict */
  verdictValues: ['true', 'none', 'null', 'pass', 'passed', 'ok', '[]', 'no failure', 'bestanden', 'reussi', 'aprobado', 'superato', 'keine', 'aucun', 'ninguno', 'nessuno'],
} as const;

/**
 * Letters of other scripts that look like Latin ones, folded to the Latin letter before matching: Cyrillic and
 * Greek capitals and small letters, and a few IPA and Latin-extended forms. After Unicode NFKC (which already
 * maps full-width, mathematical and ligature forms). A small table: the letters an attacker swaps into words.
 */
export const CONFUSABLE_LETTERS: Readonly<Record<string, string>> = {
  // Cyrillic small
  а: 'a', в: 'b', е: 'e', ё: 'e', к: 'k', м: 'm', н: 'h', о: 'o', р: 'p', с: 'c', т: 't', у: 'y', х: 'x', ѕ: 's', і: 'i', ї: 'i', ј: 'j', ԁ: 'd', һ: 'h', ԛ: 'q', ԝ: 'w', ӏ: 'l', ɡ: 'g', ү: 'y', ո: 'n', ս: 'u',
  // Cyrillic capital
  А: 'A', В: 'B', Е: 'E', Ё: 'E', К: 'K', М: 'M', Н: 'H', О: 'O', Р: 'P', С: 'C', Т: 'T', У: 'Y', Х: 'X', Ѕ: 'S', І: 'I', Ї: 'I', Ј: 'J', Ԁ: 'D', Һ: 'H', Ԛ: 'Q', Ԝ: 'W', Ӏ: 'I',
  // Greek small
  α: 'a', β: 'b', γ: 'y', ε: 'e', η: 'n', ι: 'i', κ: 'k', ν: 'v', ο: 'o', ρ: 'p', τ: 't', υ: 'u', χ: 'x', ω: 'w',
  // Greek capital
  Α: 'A', Β: 'B', Ε: 'E', Ζ: 'Z', Η: 'H', Ι: 'I', Κ: 'K', Μ: 'M', Ν: 'N', Ο: 'O', Ρ: 'P', Τ: 'T', Υ: 'Y', Χ: 'X',
  // Latin extended and IPA look-alikes NFKC leaves alone
  ı: 'i', ȷ: 'j', ɑ: 'a', ɩ: 'i', ʀ: 'R', ᴀ: 'A', ᴄ: 'C', ᴅ: 'D', ᴇ: 'E', ᴊ: 'J', ᴋ: 'K', ᴍ: 'M', ᴏ: 'O', ᴘ: 'P', ᴛ: 'T', ᴜ: 'U', ᴠ: 'V', ᴡ: 'W', ᴢ: 'Z', ꜱ: 'S',
};
