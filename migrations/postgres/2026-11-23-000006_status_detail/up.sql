-- Why a connection is in its status, as a code and its parameters (JSON,
-- tagged by "code"), beside status_reason's words: surfaces render it
-- without reading the words.
ALTER TABLE connections ADD COLUMN status_detail TEXT;
