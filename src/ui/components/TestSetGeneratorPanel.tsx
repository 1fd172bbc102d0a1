import { useState } from 'react';
import type { GeneratedTestSet } from '../../server/manual-testsets.ts';
import { api, ApiFailure } from '../api.ts';

/**
 * GEAR's test-set generator on the manual a config names (POST /api/manual/testsets): a model reference and, to keep it
 * short, at most so many sections; the test set lands under the workspace, where a config's `testSet` can name it.
 * The generator needs a model: without one the server says which field to set, and nothing runs.
 */
export function TestSetGeneratorPanel({ configName }: { configName: string }) {
  const [model, setModel] = useState('');
  const [sections, setSections] = useState('');
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  const generate = async () => {
    setBusy(true);
    setMessage(null);
    try {
      const body = { configName, ...(model.trim() ? { model: model.trim() } : {}), ...(sections.trim() ? { sections: Number(sections) } : {}) };
      const made = await api.post<GeneratedTestSet>('/api/manual/testsets', body);
      setMessage(`${made.questions} questions from ${made.generation.sections} sections → ${made.file} (related sections by ${made.generation.embedder}; ${made.generation.failures.length} failed calls)`);
    } catch (error) {
      setMessage(error instanceof ApiFailure ? error.message : String(error));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="card" data-testid="testset-generator">
      <h3>Generate a test set with a model (GEAR)</h3>
      <label>
        Model <input value={model} onChange={(e) => setModel(e.target.value)} placeholder="ollama:qwen2.5:14b" aria-label="generator model" />
      </label>{' '}
      <label>
        Sections <input value={sections} onChange={(e) => setSections(e.target.value)} placeholder="all" inputMode="numeric" aria-label="sections" size={6} />
      </label>{' '}
      <button onClick={generate} disabled={busy} data-testid="generate-testset">
        {busy ? 'Generating…' : 'Generate'}
      </button>
      {message && <p data-testid="testset-message">{message}</p>}
    </div>
  );
}
