# tags-lib.sh: sourced after lib.sh by the tests of the photographer's
# metadata (issue 28).
#
# tags_sound [CATALOG]: the invariants of src/store-tags.c hold in the
# catalog (default $DB), on either backend: a file's meta.keywords is
# NULL exactly when it has no keyword row, and is those rows' assigned
# paths one per line; meta.people is NULL exactly when it has no people
# row; a keyword row's parent is an earlier row of the same file, one
# level up, whose path begins its own.  Prints the offending rows.
tags_sound() {
	c=${1:-$DB}
	bad=$(qdb "$c" "select 'keywords without rows', m.file_id from meta m where m.keywords is not null
			and not exists (select 1 from keywords k where k.file_id = m.file_id)
		union all select 'rows without keywords', k.file_id from keywords k
			where not exists (select 1 from meta m where m.file_id = k.file_id and m.keywords is not null)
		union all select 'keywords not its rows', m.file_id from meta m where m.keywords is not null
			and m.keywords <> (select group_concat(k.path, '
') from (select path from keywords x
				where x.file_id = m.file_id and x.is_assigned = 1 order by x.ord) k)
		union all select 'people without rows', m.file_id from meta m where m.people is not null
			and not exists (select 1 from people p where p.file_id = m.file_id)
		union all select 'rows without people', p.file_id from people p
			where not exists (select 1 from meta m where m.file_id = p.file_id and m.people is not null)
		union all select 'parent not before', k.file_id from keywords k where k.parent_ord is not null
			and not exists (select 1 from keywords q where q.file_id = k.file_id and q.ord = k.parent_ord
				and q.ord < k.ord and q.depth = k.depth - 1 and substr(k.path, 1, length(q.path) + 1) = q.path || '/')
		union all select 'top level with a parent depth', k.file_id from keywords k
			where (k.parent_ord is null) <> (k.depth = 1)
		union all select 'a title and its key not both there', m.file_id from meta m
			where (m.title is null) <> (m.title_key is null)
		union all select 'a caption and its key not both there', m.file_id from meta m
			where (m.caption is null) <> (m.caption_key is null)") || return 1
	[ -z "$bad" ] && return 0
	echo "$bad"
	return 1
}

# et ARGS...: exiftool writing in place, quietly, as the tests write tags
et() {
	exiftool -q -q -overwrite_original -m "$@"
}
