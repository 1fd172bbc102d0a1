import { registerCampaignKind } from '../../../src/kinds/registry.ts';
import { fifthKind } from './kind.ts';

/** The fifth kind's registry entry: importing this module adds it, as src/kinds/registry.ts adds the built-in kinds. */
registerCampaignKind({ name: fifthKind.name, configSchema: fifthKind.configSchema, definition: async () => fifthKind });
