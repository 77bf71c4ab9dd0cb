import './agents/types.js';
import './agents/roles.js';
import './agents/chat.js';
import './agents/tasks.js';
import './agents/routing.js';
import './agents/budgets.js';
import './agents/recommendations.js';
import './agents/subscriptions.js';
