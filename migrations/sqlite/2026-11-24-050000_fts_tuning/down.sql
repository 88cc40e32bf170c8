DELETE FROM logs_fts_config WHERE k IN ('hashsize', 'automerge', 'crisismerge');
