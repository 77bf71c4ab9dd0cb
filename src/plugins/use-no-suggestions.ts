import { type ExecutionArgs, type ExecutionResult, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * graphql-js's `didYouMean` wording: ` Did you mean "a"?`, `… "a" or "b"?`, `… "a", "b", or "c"?`, and
 * `… the enum value "A"?`. Names cannot contain quotes.
 */
const SUGGESTION = / ?Did you mean (?:the [a-z ]+ )?"[^"]*"(?:(?:, or |, | or )"[^"]*")*\?/g;

function withoutSuggestion(error: GraphQLError): GraphQLError {
  if (!error.message.includes('Did you mean')) return error;
  return new GraphQLError(error.message.replace(SUGGESTION, ''), {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    originalError: error.originalError,
    extensions: error.extensions,
  });
}

function scrub(result: ExecutionResult, setResult: (result: ExecutionResult) => void) {
  if (result.errors?.some((error) => error.message.includes('Did you mean'))) {
    setResult({ ...result, errors: result.errors.map(withoutSuggestion) });
  }
}

/**
 * No "Did you mean …?" in any message (production: the schema is not published). graphql-js builds the
 * suggestions of validation (fields, arguments, types, enum values and input fields in the document) and
 * of variable coercion (enum values and input fields in variables) from the schema; its `hideSuggestions`
 * option leaves them out where each message is made. yoga's executor (@graphql-tools/executor 2) takes
 * the option but does not hand it to graphql-js's variable coercion, so the errors of an execution that
 * stopped there are cleared of suggestions as well. One switch for every transport: HTTP, SSE and
 * graphql-ws validate and execute through this envelop.
 */
export function useNoSuggestions(): Plugin {
  const hide = (args: ExecutionArgs) => {
    (args as ExecutionArgs & { hideSuggestions?: boolean }).hideSuggestions = true;
  };
  return {
    onValidate({ validateFn, setValidationFn }) {
      // graphql-js: validate(schema, document, rules, options, typeInfo).
      setValidationFn((schema, document, rules, options, typeInfo) =>
        validateFn(schema, document, rules, { ...options, hideSuggestions: true }, typeInfo),
      );
    },
    onExecute({ args }) {
      hide(args);
      return {
        onExecuteDone({ result, setResult }) {
          if (!(Symbol.asyncIterator in result)) scrub(result, setResult);
        },
      };
    },
    onSubscribe({ args }) {
      hide(args);
      return {
        onSubscribeResult({ result, setResult }) {
          if (!(Symbol.asyncIterator in result)) scrub(result, setResult);
        },
      };
    },
  };
}
