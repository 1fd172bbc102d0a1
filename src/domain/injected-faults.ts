/**
 * What faults injected on purpose mean, said the same way in every kind's report.html, on the command line and on the
 * app's run page (src/report/first-screen.ts builds the screen; src/ui/components/FirstScreenPanel.tsx shows it).
 */
export const INJECTED_FAULTS_MEANING =
  'They are injected on purpose so that the bench has failures to find: a high fail rate here is the expected demonstration that the judges catch them, not a verdict on a real head unit.';

/** Said after a verdict that is not a pass when the unit's faults were injected on purpose. */
export const INJECTED_FAULTS_EXPECTED = "the unit's faults are injected on purpose (below).";
